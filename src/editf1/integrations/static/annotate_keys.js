() => {
  let digits = "", timer = null;
  const radios = (id) => [...document.querySelectorAll(`#${id} input[type=radio]`)];
  const pick = () => {
    const options = radios("candidates");
    const k = parseInt(digits, 10);
    digits = "";
    if (k >= 0 && k < options.length) options[k].click();
  };
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    const typing = (t.tagName === "TEXTAREA" && !t.readOnly) ||
      (t.tagName === "INPUT" && !["radio", "checkbox", "button"].includes(t.type));
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    const key = e.key.toLowerCase();
    if (e.key === "Enter" && t.tagName !== "BUTTON") {
      e.preventDefault();
      document.querySelector("#save-button").click();
    } else if (e.key === "Backspace") {
      e.preventDefault();
      document.querySelector("#back-button").click();
    } else if (/^[0-9]$/.test(e.key)) {
      e.preventDefault();
      digits += e.key;
      clearTimeout(timer);
      const most = String(radios("candidates").length - 1).length;
      if (digits.length >= most) pick(); else timer = setTimeout(pick, 700);
    } else if (key === "n") {
      const none = radios("candidates")[0];
      if (none) none.click();
    } else if (key === "s") {
      const selection = radios("candidates").find((r) => r.value.startsWith("selection"));
      if (selection) selection.click();
    } else if ("abcdefghi".includes(key) && key.length === 1) {
      const options = radios("theme");
      const k = "abcdefghi".indexOf(key);
      if (k < options.length) options[k].click();
    }
  });
  // the draft is there to select a span in, never to type in; it is hidden for the
  // theme of a draft sentence, and may come back as a new textarea
  const readOnly = () => {
    const draft = document.querySelector("#draft textarea");
    if (draft) draft.readOnly = true;
  };
  readOnly();
  document.addEventListener("focusin", readOnly);
}
