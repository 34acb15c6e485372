"""The server judge: answers mapped onto the draft's candidate spans (exact, normalised or
unusable, each counted), loopback only unless allowed, models found through /v1/models,
JSON-schema support detected, and timeouts, garbage, lost servers and bounded
concurrency against a standard-library fake server; end to end against a real
``transformers serve`` on 127.0.0.1 (slow)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("openai", reason="the server judge needs the server extra (openai)")

from editf1 import clear_caches
from editf1.judges import JudgeRequest, load_content_judge, load_theme_judge
from editf1.judges.server import (
    Choice,
    ServerJudgeError,
    ServerJudgeWarning,
    check_local,
    choose,
)
from editf1.scorer import EditF1Scorer, UnusableJudgementWarning
from editf1.segment import SentenceSplitter
from editf1.themes import THEMES

SPLITTER = SentenceSplitter()
DRAFT = "Rest well. Drink water. Call us if it gets worse."
#: The draft's candidate spans (sentences, then runs of two) and NO MATCH, by hand.
CHOICES = [
    "Rest well.",
    "Drink water.",
    "Call us if it gets worse.",
    "Rest well. Drink water.",
    "Drink water. Call us if it gets worse.",
    "NO MATCH",
]
REFERENCE = "Please rest well. Drink plenty of water. Take your pills. We will call."
#: What the fake server answers to each reference sentence.
ANSWERS = {
    "Please rest well.": "Rest well.",  # exact
    "Drink plenty of water.": "drink water",  # normalised to "Drink water."
    "Take your pills.": "NO MATCH",  # exact
    "We will call.": "zzzz qqqq",  # fits no choice: unusable
}


@pytest.fixture(autouse=True)
def fresh_judges():
    """Every test loads its own judges (their counts start at zero)."""
    clear_caches()
    yield
    clear_caches()


def _request(reference: str = REFERENCE, draft: str = DRAFT) -> JudgeRequest:
    return JudgeRequest(tuple(SPLITTER.split(reference)), draft, tuple(SPLITTER.split(draft)))


class Slow:
    """Answer after ``seconds``."""

    def __init__(self, seconds: float, then: str = "NO MATCH") -> None:
        self.seconds, self.then = seconds, then


class Raw:
    """A raw 200 body with this content type."""

    def __init__(self, body: bytes, kind: str = "application/json") -> None:
        self.body, self.kind = body, kind


class Trickle:
    """A well-formed answer whose body comes one byte every ``every`` seconds."""

    def __init__(self, answer: str, every: float) -> None:
        self.answer, self.every = answer, every


class Broken:
    """A 200 answer whose body breaks: ``claimed`` bytes announced (Content-Length) but
    only ``body`` sent before the connection closes, or a ``Content-Encoding`` the body
    does not have."""

    def __init__(self, body: bytes, claimed: int | None = None, encoding: str | None = None):
        self.body, self.claimed, self.encoding = body, claimed, encoding


class Status:
    """An HTTP status with headers (a redirect's Location, a 429's Retry-After)."""

    def __init__(self, code: int, **headers: str) -> None:
        self.code, self.headers = code, {k.replace("_", "-"): v for k, v in headers.items()}


def _completion(answer: str) -> bytes:
    message = {"role": "assistant", "content": answer}
    choice = {"index": 0, "finish_reason": "stop", "message": message}
    reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "judge"}
    return json.dumps(reply | {"choices": [choice]}).encode()


class FakeServer:
    """An OpenAI-compatible chat server on 127.0.0.1 (standard library only).

    Args:
        answers: sentence → answer text, ``Slow``, an int (an HTTP error status),
            ``b"..."`` (a raw 200 body), ``Raw``, ``Trickle``, ``Broken``, ``Status``, or a list of
            these used one per request.
        default: the answer for any other sentence.
        models: the ids ``/v1/models`` lists, or a ``Status`` to answer instead.
        enforce_schema: answer ``{"answer": ...}``, replacing an answer outside the
            request's JSON-schema enum by the enum's first value (as a server that
            enforces the schema would).
        answers_before_death: after this many answers, drop every connection.
    """

    def __init__(
        self,
        answers: dict | None = None,
        *,
        default="NO MATCH",
        models=("judge",),
        enforce_schema: bool = False,
        answers_before_death: int | None = None,
    ) -> None:
        self.answers = {
            k: list(v) if isinstance(v, list) else v for k, v in (answers or {}).items()
        }
        self.default, self.enforce_schema = default, enforce_schema
        self.models = models if isinstance(models, Status) else list(models)
        self.answers_before_death = answers_before_death
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.times: list[float] = []  # when each chat request arrived (monotonic)
        self.gets = 0
        self.in_flight = self.max_in_flight = self.answered = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, payload: bytes, kind="application/json"):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _status(self, status: Status):
                self.send_response(status.code)
                for name, value in status.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self):
                server.gets += 1
                if isinstance(server.models, Status):
                    return self._status(server.models)
                data = [{"id": m, "object": "model"} for m in server.models]
                self._send(200, json.dumps({"object": "list", "data": data}).encode())

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    if (
                        server.answers_before_death is not None
                        and server.answered >= server.answers_before_death
                    ):
                        return  # no response: the connection just closes
                    server.bodies.append(body)
                    server.times.append(time.monotonic())
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._answer(body)
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _answer(self, body):
                sentence = body["messages"][-1]["content"].rpartition(": ")[2]
                answer = server.answers.get(sentence, server.default)
                if isinstance(answer, list):
                    answer = answer.pop(0)
                if isinstance(answer, Slow):
                    time.sleep(answer.seconds)
                    answer = answer.then
                if isinstance(answer, int):
                    return self._send(answer, b'{"error": "scripted"}')
                if isinstance(answer, bytes):
                    return self._send(200, answer, "text/plain")
                if isinstance(answer, Raw):
                    return self._send(200, answer.body, answer.kind)
                if isinstance(answer, Status):
                    return self._status(answer)
                if isinstance(answer, Broken):
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    if answer.encoding:
                        self.send_header("Content-Encoding", answer.encoding)
                    self.send_header("Content-Length", str(answer.claimed or len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                    self.wfile.flush()
                    self.close_connection = True
                    return None
                if isinstance(answer, Trickle):
                    payload = _completion(answer.answer)
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    try:
                        for i in range(len(payload)):
                            self.wfile.write(payload[i : i + 1])
                            self.wfile.flush()
                            time.sleep(answer.every)
                    except OSError:  # the client gave up
                        pass
                    return None
                schema = body.get("response_format")
                if server.enforce_schema and schema:
                    enum = schema["json_schema"]["schema"]["properties"]["answer"]["enum"]
                    answer = json.dumps({"answer": answer if answer in enum else enum[0]})
                with server.lock:
                    server.answered += 1
                self._send(200, _completion(answer))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def chat_bodies(self) -> list[dict]:
        """Chat requests other than the constraint probe."""
        return [b for b in self.bodies if b["messages"][0]["role"] == "system"]

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _judge(server: FakeServer, **options):
    return load_content_judge("server", {"base_url": server.url, "retries": 0, **options})


# -- choosing among the candidates ---------------------------------------------------


def test_choose_exact_up_to_whitespace_normalised_or_unusable():
    assert choose("  Drink\nwater. ", CHOICES) == Choice(1, "exact")
    assert choose('{"answer": "NO MATCH"}', CHOICES) == Choice(5, "exact")
    # case, the final full stop, quotes around it, curly quotes, NFKC forms set aside
    assert choose("drink water", CHOICES) == Choice(1, "normalised")
    assert choose("\u201cRest well\u201d", CHOICES) == Choice(0, "normalised")
    assert choose("`ＲＥＳＴ WELL.`", CHOICES) == Choice(0, "normalised")
    assert choose("zzzz qqqq", CHOICES).how == "unusable"
    assert choose("", CHOICES).how == "unusable"
    assert choose("ab", ["ax", "ay"]).how == "unusable"


@pytest.mark.parametrize(
    "answer",
    [
        "Match",  # a similarity score took it for NO MATCH (0.77)
        "Do not take ibuprofen 400 mg twice daily.",  # for its opposite (0.91)
        "Take ibuprofen 800 mg twice daily.",  # for another dose (0.97)
        "Take aspirin 81 mg once daily.",  # for another drug (0.69)
        "Take ibuprofen 400 mg twice daily?",  # a question is not the instruction
        "Take ibuprofen 400 mg",  # a span's first words are not the span
    ],
)
def test_an_answer_that_differs_in_a_word_or_number_is_unusable_never_snapped(answer):
    choices = ["Take ibuprofen 400 mg twice daily.", "Rest well.", "NO MATCH"]
    assert choose(answer, choices) == Choice(None, "unusable")


def test_a_theme_label_by_its_unique_first_words():
    assert choose("medical planning", THEMES, by_first_words=True) == Choice(4, "normalised")
    assert choose("Logistics.", THEMES, by_first_words=True) == Choice(5, "normalised")
    # first words of two labels, a word of none, or part of a hyphenated word: unusable
    for answer in ("Medical", "medication", "planning"):
        assert choose(answer, THEMES, by_first_words=True).how == "unusable"
    assert choose("medical planning", THEMES).how == "unusable"


# -- loopback only ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "http://127.8.9.1/v1",
        "http://localhost:1/v1",
        "http://[::1]:8000/v1",
    ],
)
def test_loopback_hosts_are_accepted(url):
    assert check_local(url, allow_remote=False) == url


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.5:8000/v1",
        "https://judge.example.org/v1",
        "http://192.168.1.2/v1",
        "http://[2001:db8::1]/v1",
    ],
)
def test_other_hosts_need_allow_remote(url):
    with pytest.raises(
        ValueError, match=r"clinical text leaves this machine; pass allow_remote=True"
    ):
        check_local(url, allow_remote=False)
    assert check_local(url, allow_remote=True) == url
    # the judge refuses before any connection is tried
    with pytest.raises(ValueError, match="is not this machine"):
        load_content_judge("server", {"base_url": url})


def test_base_url_must_be_http():
    with pytest.raises(ValueError, match="http"):
        check_local("127.0.0.1:8000", allow_remote=False)


# -- models, keys, constraint detection ------------------------------------------------


def test_the_one_served_model_is_used_and_names_are_checked():
    with FakeServer() as server:
        assert _judge(server).model == "judge"
        with pytest.raises(ValueError, match=r"'other' is not served .* it serves \['judge'\]"):
            _judge(server, model="other")
    with FakeServer(models=["a", "b"]) as server:
        with pytest.raises(ValueError, match=r"serves 2 models \['a', 'b'\]"):
            _judge(server)
        assert _judge(server, model="b").model == "b"


def test_an_adapter_is_requested_by_name():
    with FakeServer(models=["base", "judge-lora"]) as server:
        judge = _judge(server, model="base", adapter="judge-lora")
        judge.match([_request("Please rest.")])
        assert [b["model"] for b in server.chat_bodies()] == ["judge-lora"]
        assert "model=base,adapter=judge-lora" in judge.fingerprint
        with pytest.raises(ValueError, match=r"adapter 'nope' is not served"):
            _judge(server, adapter="nope")


def test_no_server_is_a_clear_error():
    with FakeServer() as server:
        url = server.url
    with pytest.raises(ConnectionError, match="no server answers at"):
        load_content_judge("server", {"base_url": url, "retries": 0})


def test_api_key_is_read_from_the_named_variable_and_never_shown(monkeypatch):
    monkeypatch.setenv("EDITF1_TEST_KEY", "s3cret-value")
    with FakeServer() as server:
        judge = _judge(server, api_key_env="EDITF1_TEST_KEY")
        judge.match([_request("Please rest.")])
        assert server.headers[-1]["authorization"] == "Bearer s3cret-value"
        assert "s3cret" not in judge.fingerprint
        with pytest.raises(ValueError, match="NAME of an environment variable") as error:
            _judge(server, api_key_env="sk-live-abc123")
        assert "abc123" not in str(error.value)
        with pytest.raises(
            ValueError, match=r"EDITF1_UNSET_KEY, but that environment variable is unset"
        ):
            _judge(server, api_key_env="EDITF1_UNSET_KEY")
        # a key that looks like a name, pasted where the name belongs, is not shown
        with pytest.raises(ValueError, match=r"names \(not shown\), but") as error:
            _judge(server, api_key_env="llamaKEY_8f3a9c2d7e")
        assert "8f3a9c2d7e" not in str(error.value)


def test_json_schema_support_is_detected_and_the_enum_is_the_candidates():
    with FakeServer(ANSWERS, enforce_schema=True) as server:
        judge = _judge(server)
        assert "constraint=json_schema(detected)" in judge.fingerprint
        [judgements] = judge.match([_request()])
        body = server.chat_bodies()[0]
        schema = body["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["answer"]["enum"] == CHOICES
        assert body["temperature"] == 0.0
        # the longest choice has 38 characters
        assert body["max_tokens"] == 38 + 32
    # answers outside the enum became its first value, as the server enforced
    assert [j.span.text if j.span else j.status for j in judgements] == [
        "Rest well.",
        "Rest well.",
        "no_match",
        "Rest well.",
    ]
    assert judge.counts == {"exact": 4}


def test_a_server_that_ignores_the_schema_is_detected():
    with FakeServer(ANSWERS) as server:
        judge = _judge(server)
        assert "constraint=none(detected)" in judge.fingerprint
        with pytest.warns(ServerJudgeWarning):
            judge.match([_request()])
        assert all("response_format" not in b for b in server.chat_bodies())
    with FakeServer(ANSWERS) as server:
        assert "constraint=json_schema," in _judge(server, constraint="json_schema").fingerprint


# -- answers, counted ------------------------------------------------------------------


def test_answers_are_verbatim_spans_no_match_or_unusable_and_counted():
    with FakeServer(ANSWERS) as server:
        judge = _judge(server)
        with pytest.warns(ServerJudgeWarning, match="of 4 answers, normalised: 1, unusable: 1"):
            [judgements] = judge.match([_request()])
    assert [j.status for j in judgements] == ["match", "match", "no_match", "unusable"]
    assert [(j.span.start, j.span.end) for j in judgements[:2]] == [(0, 10), (11, 23)]
    assert all(DRAFT[j.span.start : j.span.end] == j.span.text for j in judgements[:2])
    assert judgements[1].raw == "[normalised to a choice] drink water"
    assert judge.counts == {"exact": 2, "normalised": 1, "unusable": 1}


def test_the_scorer_counts_what_the_server_judge_could_not_use():
    with FakeServer(ANSWERS) as server:
        scorer = EditF1Scorer(
            "server",
            None,
            content_judge_options={"base_url": server.url, "retries": 0},
        )
        with pytest.warns(ServerJudgeWarning), pytest.warns(UnusableJudgementWarning):
            result = scorer.score([DRAFT], [REFERENCE])
    # matched: rest well, drink water; not matched: pills, call (unusable);
    # draft sentence left unmatched: "Call us if it gets worse."
    assert (result.expected_matches, result.expected_additions) == (2, 2)
    assert result.expected_deletions == 1
    assert result.unusable_judgements == 1
    assert "server-content(model=judge" in result.reproducibility


def test_evaluate_load_takes_the_same_options(tmp_path):
    import evaluate

    metric_dir = Path(__file__).resolve().parents[1] / "metrics" / "edit_f1"
    with FakeServer(ANSWERS) as server:
        metric = evaluate.load(str(metric_dir), "server+none", cache_dir=str(tmp_path))
        options = {"base_url": server.url, "model": "judge", "retries": 0}
        with pytest.warns(ServerJudgeWarning), pytest.warns(UnusableJudgementWarning):
            result = metric.compute(
                predictions=[DRAFT], references=[REFERENCE], content_judge_options=options
            )
    # as the scorer test: EM 2, EA 2, ED 1, so precision 2/3 and recall 2/4
    assert (result["precision"], result["recall"]) == (pytest.approx(2 / 3), 0.5)
    assert result["unusable_judgements"] == 1


def test_theme_labels_exact_normalised_or_unusable():
    answers = {"Call us.": "Logistics", "Take it.": "medical planning", "Hi.": "NO MATCH"}
    with FakeServer(answers) as server:
        judge = load_theme_judge("server", {"base_url": server.url, "retries": 0})
        with pytest.warns(ServerJudgeWarning):
            labels = judge.classify(["Call us.", "Take it.", "Hi."])
    assert [j.theme for j in labels] == ["Logistics", "Medical planning instruction", None]
    assert judge.counts == {"exact": 1, "normalised": 1, "unusable": 1}


def test_a_draft_without_sentences_is_no_match_without_asking():
    with FakeServer() as server:
        judge = _judge(server)
        [judgements] = judge.match([_request("Please rest.", draft="")])
        assert server.chat_bodies() == []
    assert [j.status for j in judgements] == ["no_match"]


# -- failures, counted -----------------------------------------------------------------


def test_a_slow_server_times_out_and_is_counted():
    answers = {"Please rest well.": Slow(2.0, "Rest well.")}
    with FakeServer(answers) as server:
        judge = _judge(server, timeout_s=0.3, max_failed_share=1.0)
        with pytest.warns(ServerJudgeWarning, match="failed: timeout: 1"):
            [judgements] = judge.match([_request()])
    assert judgements[0].status == "unusable"
    assert judgements[0].raw == "[no answer: timeout]"
    assert judge.counts["failed: timeout"] == 1


def test_garbage_and_errors_are_counted_by_reason():
    answers = {
        "Please rest well.": b"<html>not json</html>",
        "Drink plenty of water.": 500,
        "Take your pills.": b'{"unexpected": 1}',
        "We will call.": "",
    }
    with FakeServer(answers) as server:
        judge = _judge(server, max_failed_share=1.0)
        with pytest.warns(ServerJudgeWarning):
            [judgements] = judge.match([_request()])
    assert all(j.status == "unusable" for j in judgements)
    assert judge.counts == {
        "failed: malformed response": 2,
        "failed: HTTP 500": 1,
        "failed: empty answer": 1,
    }


def test_a_429_or_503_is_retried():
    answers = {"Please rest.": [503, 429, "Rest well."]}
    with FakeServer(answers) as server:
        judge = _judge(server, retries=2)
        [[judgement]] = judge.match([_request("Please rest.")])
    assert judgement.span.text == "Rest well."
    assert judge.counts == {"exact": 1}


def test_a_server_lost_mid_run_is_counted():
    with FakeServer(answers_before_death=2) as server:
        # the probe is the first answer
        judge = _judge(server, max_concurrency=1, max_failed_share=1.0)
        with pytest.warns(ServerJudgeWarning, match="failed: connection lost: 3"):
            [judgements] = judge.match([_request()])
    assert [j.status for j in judgements] == ["no_match", "unusable", "unusable", "unusable"]


def test_concurrency_is_bounded():
    with FakeServer(default=Slow(0.2)) as server:
        judge = _judge(server, max_concurrency=2)
        judge.match([_request(), _request()])
        assert len(server.chat_bodies()) == 8
        assert server.max_in_flight == 2


def test_bad_options():
    with FakeServer() as server:
        for options, message in [
            ({"max_concurrency": 0}, "max_concurrency"),
            ({"timeout_s": 0}, "timeout_s"),
            ({"retries": -1}, "retries"),
            ({"constraint": "regex"}, "constraint"),
        ]:
            with pytest.raises(ValueError, match=message):
                _judge(server, **options)
        with pytest.raises(TypeError, match="does not take option"):
            _judge(server, temperature=0.7)


# -- the connection actually made (issue 22, class 1) -----------------------------------


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it gets (a stand-in for a
    proxy: it answers nothing)."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.socket.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while self.running:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def __enter__(self) -> Listener:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.running = False
        self.thread.join()
        self.socket.close()


def _generator(url: str, **options):
    from editf1.drafting.generators import ServerGenerator

    return ServerGenerator(url, retries=0, **options)


@pytest.fixture
def proxy(monkeypatch):
    """Every proxy variable of the environment names a local listener."""
    with Listener() as listener:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            monkeypatch.setenv(name, listener.url)
            monkeypatch.setenv(name.lower(), listener.url)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        yield listener


def test_environment_proxies_are_not_used_for_a_loopback_server(proxy):
    with FakeServer() as server:
        judge = _judge(server)
        [[judgement]] = judge.match([_request("Please rest.")])
        drafts = _generator(server.url).generate([[{"role": "user", "content": "Hi."}]])
    assert judgement.status == "no_match" and drafts == [["NO MATCH"]]
    # models listed twice, the probe, one judgement, one draft: all straight to the server
    assert (server.gets, len(server.bodies)) == (2, 3)
    assert proxy.connections == 0
    assert "proxy" not in judge.fingerprint and "allow_remote" not in judge.fingerprint


def test_with_allow_remote_the_environment_proxy_is_used_and_recorded(proxy):
    from editf1.judges.connection import Connection

    note = Connection("http://judge.example.org/v1", allow_remote=True).note
    assert note == f",allow_remote=True,proxy={proxy.url}"
    with FakeServer() as server, pytest.raises(ConnectionError):
        _judge(server, allow_remote=True)  # the listener answers nothing
    assert proxy.connections >= 1 and server.gets == 0


def test_redirects_are_never_followed():
    with FakeServer() as elsewhere:
        target = Status(307, Location=f"{elsewhere.url}/chat/completions")
        with FakeServer({"Please rest.": target}) as server:
            judge = _judge(server)
            with pytest.raises(ServerJudgeError, match=r"redirect not followed \(HTTP 307\)"):
                judge.match([_request("Please rest.")])
            assert judge.counts == {"failed: redirect not followed (HTTP 307)": 1}
        with FakeServer(models=Status(302, Location=f"{elsewhere.url}/models")) as server:
            with pytest.raises(ConnectionError, match=r"redirect not followed \(HTTP 302\)"):
                _judge(server)
            with pytest.raises(ConnectionError, match=r"redirect not followed"):
                _generator(server.url)
        with (
            FakeServer(default=target) as server,
            pytest.raises(ConnectionError, match=r"conversation 0 no answer: redirect"),
        ):
            _generator(server.url).generate([[{"role": "user", "content": "Hi."}]])
        assert (elsewhere.gets, elsewhere.bodies) == (0, [])


@pytest.mark.parametrize("false", [False, "False", "false", "no", "NO", "0", 0])
def test_allow_remote_false_in_any_spelling_keeps_text_here(false):
    from editf1.cli.judge_options import judge_options

    url = "http://10.0.0.5:8000/v1"
    with pytest.raises(ValueError, match="is not this machine"):
        _judge_at(url, allow_remote=false)
    with pytest.raises(ValueError, match="is not this machine"):
        _generator(url, allow_remote=false)
    # what --content-judge-option allow_remote=... gives, through the scorer
    options = judge_options([f"base_url={url}", f"allow_remote={false}"])
    with pytest.raises(ValueError, match="is not this machine"):
        EditF1Scorer("server", None, content_judge_options=options)


@pytest.mark.parametrize("bad", ["flase", "off", "", 2, 0.5, []])
def test_allow_remote_spellings_that_are_no_boolean_are_refused(bad):
    with pytest.raises(ValueError, match=r"allow_remote must be true or false \(or yes/no, 1/0\)"):
        _judge_at("http://10.0.0.5:8000/v1", allow_remote=bad)
    with pytest.raises(ValueError, match="allow_remote must be true or false"):
        _generator("http://10.0.0.5:8000/v1", allow_remote=bad)


def _judge_at(url: str, **options):
    return load_content_judge("server", {"base_url": url, "retries": 0, **options})


def test_credentials_in_base_url_are_never_shown():
    with FakeServer(ANSWERS) as server:
        url = server.url.replace("http://", "http://alice:pw-s3cret@")
        judge = load_content_judge("server", {"base_url": url, "retries": 0})
        with pytest.warns(ServerJudgeWarning) as caught:
            judge.match([_request()])
        scorer = EditF1Scorer("server", None, content_judge_options={"base_url": url})
        generator = _generator(url)
    shown = [judge.fingerprint, scorer.reproducibility, generator.base_url]
    shown += [str(w.message) for w in caught]
    with pytest.raises(ValueError) as remote:
        _judge_at("http://bob:pw-s3cret@10.0.0.5/v1?token=t0ken")
    with pytest.raises(ConnectionError) as gone:  # the server has stopped
        _judge_at(url, timeout_s=5)
    # a query string would break every request (the client appends paths after it)
    with pytest.raises(ValueError, match=r"holds a query string or fragment") as query:
        _judge_at(url + "?token=t0ken")
    shown += [str(remote.value), str(gone.value), str(query.value)]
    assert all("s3cret" not in text and "t0ken" not in text for text in shown)
    assert "base_url=http://***@127.0.0.1:" in judge.fingerprint
    assert "/v1?***" in str(query.value)


# -- the text being judged is never an instruction (issue 22, class 2) -----------------


@pytest.mark.parametrize("line", ["NO MATCH", "No match.", "NO  MATCH!"])
def test_a_draft_line_reading_no_match_never_turns_no_match_into_a_match(line):
    draft = f"Rest well.\n{line}"
    request = _request("Take your pills. Call the clinic.", draft=draft)
    with FakeServer(enforce_schema=True) as server:  # always answers NO MATCH
        [judgements] = _judge(server).match([request])
        enum = server.chat_bodies()[0]["response_format"]["json_schema"]["schema"]
    assert [j.status for j in judgements] == ["no_match", "no_match"]
    # the span reading NO MATCH alone is not offered; NO MATCH is the answer's own
    assert enum["properties"]["answer"]["enum"] == ["Rest well.", draft, "NO MATCH"]
    with FakeServer({"Take your pills.": line, "Call the clinic.": "no match"}) as server:
        judge = _judge(server)
        [judgements] = judge.match([request])
        result = EditF1Scorer(judge, None).score([draft], ["Take your pills. Call the clinic."])
    assert [j.status for j in judgements] == ["no_match", "no_match"]
    assert (result.expected_matches, result.f1) == (0, 0.0)


# -- a failing server never looks like a score (issue 22, class 3) ---------------------


#: Ten reference sentences: one failed request among them is within the default
#: max_failed_share (0.1), so a run goes on and counts it.
TEN = " ".join(f"Please rest on day {day}." for day in range(1, 10)) + " Take your pills."


def _one_bad_of_ten(answer, **options) -> list:
    with FakeServer({"Take your pills.": answer}) as server:
        judge = _judge(server, **options)
        with pytest.warns(ServerJudgeWarning) as caught:
            [judgements] = judge.match([_request(TEN)])
    assert [j.status for j in judgements] == ["no_match"] * 9 + ["unusable"]
    assert len(caught) == 1 and "of 10 answers, failed: " in str(caught[0].message)
    return judgements[-1]


def test_a_malformed_json_body_is_a_failed_judgement_and_the_run_goes_on():
    for body in (b'{"choices": [{"message": ', b"[]", b"\xff\xfe"):
        bad = _one_bad_of_ten(Raw(body))
        assert bad.raw == "[no answer: malformed response]"


def test_a_body_broken_off_or_in_a_false_encoding_is_a_failed_judgement():
    # the server announces 1000 bytes, sends 13 and closes (killed mid-answer): retried
    # (retries=0 here), then failed, and the run goes on; no traceback
    bad = _one_bad_of_ten(Broken(b'{"choices": [', claimed=1000))
    assert bad.raw == "[no answer: connection lost]"
    bad = _one_bad_of_ten(Broken(_completion("Rest well."), encoding="gzip"))
    assert bad.raw == "[no answer: malformed response]"


def test_a_body_broken_off_once_is_retried():
    answers = {"Please rest.": [Broken(b'{"choices": [', claimed=1000), "Rest well."]}
    with FakeServer(answers) as server:
        [[judgement]] = _judge(server, retries=1).match([_request("Please rest.")])
    assert judgement.span.text == "Rest well."


def test_timeout_s_is_a_total_deadline_for_a_trickling_body():
    # 200-odd bytes at one every 0.02 s: about 5 s in all, against a deadline of 0.5 s
    bad = _one_bad_of_ten(Trickle("Rest well.", every=0.02), timeout_s=0.5)
    assert bad.raw == "[no answer: timeout]"


def test_an_oversized_answer_is_cut_off_counted_and_not_kept():
    huge = "Rest well. " * 500_000  # 5.5 MB where about 70 tokens were asked
    bad = _one_bad_of_ten(huge)
    assert bad.raw == "[no answer: oversized response]"


def test_retry_after_is_honoured_only_within_the_deadline():
    answers = {"Please rest.": [Status(429, Retry_After="60"), "Rest well."]}
    with FakeServer(answers) as server:
        judge = _judge(server, timeout_s=0.5, retries=1)
        [[judgement]] = judge.match([_request("Please rest.")])
        first, retry = server.times[-2:]
    assert judgement.span.text == "Rest well."
    # the retry came after at most timeout_s, not the 60 s the server asked for
    assert retry - first < 10


def test_a_server_failing_throughout_stops_the_run_with_one_line(tmp_path, capsys):
    from editf1.cli import main

    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"prediction": DRAFT, "reference": REFERENCE}) + "\n")
    out = tmp_path / "scored.jsonl"
    with FakeServer(default=500) as server:
        options = {"base_url": server.url, "constraint": "none"}  # no probe
        scorer = EditF1Scorer("server", None, content_judge_options=options)
        with pytest.raises(ServerJudgeError, match=r"4 of 4 requests failed \(failed: HTTP 500"):
            scorer.score([DRAFT], [REFERENCE])
        theme = load_theme_judge("server", options | {"retries": 0})
        with pytest.raises(ServerJudgeError, match=r"max_failed_share=0\.1"):
            theme.classify(["Call us.", "Rest."])
        capsys.readouterr()
        argv = ["score", str(rows), "--content-judge", "server", "--theme-judge", "none"]
        argv += ["--content-judge-option", f"base_url={server.url}", "-o", str(out), "-q"]
        argv += ["--content-judge-option", "constraint=none"]
        code = main([*argv, "--content-judge-option", "retries=0"])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.count("\n") == 1 and "4 of 4 requests failed" in err
    with pytest.raises(ValueError, match="max_failed_share must be a number in"):
        _judge_at(server.url, max_failed_share=1.5)


# -- a real server: transformers serve on 127.0.0.1 ------------------------------------


@contextlib.contextmanager
def _transformers_serve(folder: Path, root: Path):
    """``transformers serve FOLDER`` on a free loopback port, offline, until the block
    ends (or a test kills it). Yields ``{"url", "model", "process"}``."""
    pytest.importorskip("fastapi", reason="transformers serve needs the server extra")
    pytest.importorskip("uvicorn", reason="transformers serve needs the server extra")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [  # the `transformers` console script, run by this interpreter
        sys.executable,
        "-c",
        "import sys; from transformers.cli.transformers import main; sys.exit(main())",
        "serve",
        str(folder),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
    ]
    env = os.environ | {"HF_HOME": str(root / "hf"), "HF_HUB_OFFLINE": "1"}
    with open(root / "serve.log", "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    pytest.fail(
                        "transformers serve did not start: "
                        f"{(root / 'serve.log').read_text()[-2000:]}"
                    )
                time.sleep(0.5)
        try:
            yield {"url": url, "model": str(folder), "process": process}
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``transformers serve`` of a tiny model that always answers NO MATCH."""
    from editf1.judges.generative.tiny import build_tiny_causal_lm

    root = tmp_path_factory.mktemp("served")
    folder = build_tiny_causal_lm(root / "no-match", answer="NO MATCH")
    with _transformers_serve(folder, root) as server:
        yield server


@pytest.mark.slow
def test_real_server_answers_are_verbatim_and_deterministic(served):
    judge = load_content_judge("server", {"base_url": served["url"]})
    assert judge.model == served["model"]
    assert "constraint=none(detected)" in judge.fingerprint  # serve ignores the schema
    requests = [_request(), _request("Rest. Call us.", draft="Rest now. Call us.")]
    first = judge.match(requests)
    assert first == judge.match(requests)
    assert [[j.status for j in pair] for pair in first] == [["no_match"] * 4, ["no_match"] * 2]
    assert judge.counts == {"exact": 12}
    with pytest.raises(ValueError, match=r"'nope' is not served .* it serves \["):
        load_content_judge("server", {"base_url": served["url"], "model": "nope"})


@pytest.mark.slow
def test_real_server_theme_answers_that_are_no_label_are_counted(served, monkeypatch):
    judge = load_theme_judge("server", {"base_url": served["url"], "model": served["model"]})
    sent = []
    ask_all = judge._ask_all  # records what goes out (undone after the test: judges are cached)
    monkeypatch.setattr(judge, "_ask_all", lambda bodies: sent.extend(bodies) or ask_all(bodies))
    with pytest.warns(ServerJudgeWarning, match="unusable: 2"):
        labels = judge.classify(["Call us.", "Rest."])
    # the model's one answer, NO MATCH, is none of the nine labels: unusable, kept as raw
    assert [(j.theme, j.raw) for j in labels] == [(None, "NO MATCH")] * 2
    assert judge.counts == {"unusable": 2}
    # each request offered the nine labels (no schema: serve ignores it) with room for the
    # longest plus 32 tokens, one sentence per request
    assert [body["messages"][-1]["content"] for body in sent] == [
        "Sentence: Call us.",
        "Sentence: Rest.",
    ]
    for body in sent:
        assert all(f"\n- {theme}: " in body["messages"][0]["content"] for theme in THEMES)
        assert body["max_tokens"] == max(map(len, THEMES)) + 32
        assert "response_format" not in body and body["temperature"] == 0.0


@pytest.mark.slow
def test_real_server_scores_oncqa_pairs_through_the_command(served, shared_data, tmp_path):
    from editf1.cli import main

    if not (shared_data / "oncqa" / "stage1.csv").is_file():
        pytest.skip("../shared/data/oncqa/stage1.csv is absent")

    summary = tmp_path / "summary.json"
    code = main(
        [
            "score",
            "--dataset",
            "oncqa",
            "--data-dir",
            str(shared_data / "oncqa"),
            "--limit",
            "3",
            "--content-judge",
            "server",
            "--content-judge-option",
            f"base_url={served['url']}",
            "--content-judge-option",
            f"model={served['model']}",
            "--theme-judge",
            "none",
            "--no-progress",
            "-o",
            str(tmp_path / "rows.jsonl"),
            "--summary-json",
            str(summary),
        ]
    )
    assert code == 0
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    result = json.loads(summary.read_text())
    # every reference sentence answered NO MATCH: nothing matched, nothing unusable
    assert result["expected_matches"] == 0 and result["unusable_judgements"] == 0
    assert result["expected_additions"] == sum(r["expected_additions"] for r in rows)
    assert result["expected_additions"] == sum(len(r["alignment"]) for r in rows) > 0
    assert all(a["status"] == "no_match" for r in rows for a in r["alignment"])
    assert result["expected_deletions"] == sum(len(r["prediction_sentences"]) for r in rows)
    assert f"server-content(model={served['model']}" in result["reproducibility"]


@pytest.mark.slow
def test_the_benchmark_times_the_server_judge_beside_the_batched_one(served):
    import argparse
    import importlib.util

    benchmarks = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(benchmarks))  # the script imports benchlib beside it
    try:
        spec = importlib.util.spec_from_file_location("bench_llm", benchmarks / "llm_judge.py")
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
    finally:
        sys.path.remove(str(benchmarks))
    args = argparse.Namespace(
        base=served["model"],
        adapter=None,
        theme_base=None,
        theme_adapter=None,
        skip_theme=True,
        skip_naive=True,
        batch_size=4,
        max_new_tokens=6,
        device="cpu",
        dtype=None,
    )
    loaded = bench.judges(args, served["url"])
    assert list(loaded["content"]) == ["shared_prefix", "server"]
    rows = [
        {"prediction": DRAFT, "reference": REFERENCE},
        {"prediction": "Rest now. Call us.", "reference": "Rest. Call us."},
    ]
    records = bench.measure(loaded, rows, chunk=1, device="cpu", log=lambda m: None)
    summary = bench.summarise(records, ["content"])
    assert summary["server_counts"] == {"exact": 6}  # NO MATCH to every sentence
    # the same answers as the batched judge where it, too, said NO MATCH throughout
    expected = sum(all(s == "no_match" for s in r["content_statuses"]) for r in records)
    assert summary["server_same_answers"] == expected
    assert set(summary["content"]) >= {"shared_prefix_seconds_per_pair", "server_seconds_per_pair"}
    assert "speedup" not in summary["content"]  # no naive way to compare with


@pytest.mark.slow
def test_real_server_killed_mid_run_is_counted(served):
    """Last of the real-server tests: it stops the server."""
    judge = load_content_judge(
        "server", {"base_url": served["url"], "retries": 1, "max_failed_share": 1.0}
    )
    [before] = judge.match([_request("Please rest.")])
    assert before[0].status == "no_match"
    served["process"].kill()
    served["process"].wait(timeout=30)
    with pytest.warns(ServerJudgeWarning, match="failed: connection lost: 4"):
        [after] = judge.match([_request()])
    assert [j.status for j in after] == ["unusable"] * 4
    assert judge.counts == {"exact": 1, "failed: connection lost": 4}


# -- from a trained judge to a served one ------------------------------------------------

_DRAFTS = {
    "a": "Please rest today. Drink plenty of water. Call us if the fever lasts three days.",
    "b": "Your lab results look normal. We will schedule a follow-up visit next week.",
    "c": "Take 2.5 mg of lisinopril twice daily with food. If the swelling gets worse, call 911.",
    "d": "Hi Maria, thanks for your message. Rest and drink water.",
}
#: Content labels (case, reference sentence, span or NO MATCH); every span is a whole
#: draft sentence, so it is one of the server judge's choices.
_LABELS = [
    ("a", "Stay hydrated.", "Drink plenty of water."),
    ("a", "Take ibuprofen for pain.", None),
    ("b", "Labs are normal.", "Your lab results look normal."),
    ("b", "Fast before the test.", None),
    ("c", "Call 911 if it worsens.", "If the swelling gets worse, call 911."),
    ("c", "Thanks for writing.", None),
    ("d", "Rest and hydrate.", "Rest and drink water."),
    ("d", "We will refer you to cardiology.", None),
]


@pytest.mark.slow
def test_a_trained_judge_is_merged_served_and_scores_through_the_command(tmp_path, monkeypatch):
    """train-judge (tiny base built here) -> merge-judge -> transformers serve of the
    merged folder -> edit-f1 score --content-judge server: the merged weights are the
    in-process judge's, the command runs against the served folder, and every served
    answer is the merged model's own greedy answer to that request (served as trained:
    its chat template, its prompt)."""
    pytest.importorskip("peft", reason="training a judge needs the llm extra")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from editf1.cli import main
    from editf1.judges.generative import load_judge_model
    from editf1.judges.generative.tiny import build_tiny_causal_lm

    base = build_tiny_causal_lm(tmp_path / "base")
    labels = tmp_path / "labels.jsonl"
    rows = [
        {"case": c, "prediction": _DRAFTS[c], "reference": r, "match": s is not None, "span": s}
        for c, r, s in _LABELS
    ]
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    adapter, merged = tmp_path / "my-judge", tmp_path / "my-judge-merged"
    settings = ["--learning-rate", "0.02", "--epochs", "40", "--batch-size", "2"]
    train = ["train-judge", "llm-content", "--base", str(base), "--data", str(labels)]
    assert main([*train, "-o", str(adapter), *settings, "--test-size", "0.5"]) == 0
    assert not (adapter / "config.json").exists()  # an adapter only: no model to serve
    assert main(["merge-judge", str(adapter), "-o", str(merged)]) == 0
    names = {path.name for path in merged.iterdir()}
    assert {"model.safetensors", "config.json", "tokenizer.json", "editf1_merged.json"} <= names
    assert "adapter_config.json" not in names
    record = json.loads((merged / "editf1_merged.json").read_text())
    assert (record["task"], record["prompt"], record["dtype"]) == (
        "content",
        "content-v1",
        "float32",
    )
    assert record["base"]["spec"] == str(base)

    # the merged folder, loaded by plain transformers, is the in-process judge
    ours = load_judge_model(
        "content",
        None,
        str(adapter),
        device="cpu",
        dtype=None,
        chat_template=None,
        cache_dir=None,
        local_files_only=True,
    )
    plain = AutoModelForCausalLM.from_pretrained(merged).eval()
    assert AutoTokenizer.from_pretrained(merged).chat_template == ours.tokenizer.chat_template
    ids = torch.tensor([[5, 17, 42, 8, 99, 3]])
    with torch.no_grad():
        assert torch.allclose(plain(ids).logits, ours.model(ids).logits, atol=1e-5)

    # served: the command scores the pairs, and every answer is the merged model's own
    # greedy answer to the request's chat messages (what `transformers serve` runs)
    pairs = tmp_path / "pairs.jsonl"
    cases = sorted(_DRAFTS)
    pairs.write_text(
        "".join(
            json.dumps(
                {
                    "id": case,
                    "prediction": _DRAFTS[case],
                    "reference": " ".join(r for c, r, _ in _LABELS if c == case),
                }
            )
            + "\n"
            for case in cases
        ),
        encoding="utf-8",
    )
    out = tmp_path / "scores.jsonl"
    with _transformers_serve(merged, tmp_path) as server:
        # a random tiny model seldom stops before max_tokens: its cut-off answers are
        # expected here, not a failing server
        options = ["--content-judge-option", f"base_url={server['url']}"]
        options += ["--content-judge-option", "max_failed_share=1"]
        score = ["score", str(pairs), "--content-judge", "server", *options]
        code = main([*score, "--theme-judge", "none", "--no-progress", "-o", str(out)])
        assert code == 0
        judge = load_content_judge("server", {"base_url": server["url"], "max_failed_share": 1.0})
        sent, replies = [], []
        ask_all = judge._ask_all

        def recording(bodies):
            sent.extend(bodies)
            replies.extend(answered := ask_all(bodies))
            return answered

        monkeypatch.setattr(judge, "_ask_all", recording)  # the registry caches the judge
        requests = [
            _request(" ".join(r for d, r, _ in _LABELS if d == c), _DRAFTS[c]) for c in cases
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ServerJudgeWarning)
            judged = judge.match(requests)
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [[a["status"] for a in row["alignment"]] for row in scored] == [
        [j.status for j in pair] for pair in judged
    ]
    assert len(sent) == len(_LABELS) and judge.model == str(merged)
    tokenizer = AutoTokenizer.from_pretrained(merged)
    for body, reply in zip(sent, replies):
        prompt = tokenizer.apply_chat_template(
            body["messages"], add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        with torch.no_grad():
            ids = plain.generate(**prompt, do_sample=False, max_new_tokens=body["max_tokens"])
        answer = ids[0, prompt["input_ids"].shape[1] :]
        finished = answer[-1].item() == tokenizer.eos_token_id
        (choice,) = reply.payload["choices"]
        assert choice["finish_reason"] == ("stop" if finished else "length")
        expected = tokenizer.decode(answer, skip_special_tokens=True)
        assert choice["message"]["content"].strip() == expected.strip()


def test_the_server_judge_reports_each_answer_as_it_arrives():
    """One progress report per request answered (four reference sentences), through the
    contract, which then has nothing left to settle; the theme judge likewise."""
    from editf1.judges.contract import judge_content, judge_themes
    from editf1.judges.progress import reporting

    with FakeServer(ANSWERS) as server:
        judge = _judge(server)
        reports = []
        with warnings.catch_warnings(), reporting(reports.append):
            warnings.simplefilter("ignore", ServerJudgeWarning)
            judge_content(judge, [_request()])
        assert reports == [1, 1, 1, 1]
        themes = load_theme_judge("server", {"base_url": server.url, "retries": 0})
        labelled = []
        with warnings.catch_warnings(), reporting(labelled.append):
            warnings.simplefilter("ignore", ServerJudgeWarning)
            judge_themes(themes, ["Rest.", "Call us."])
        assert labelled == [1, 1]
