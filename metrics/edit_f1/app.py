"""The edit-F1 Space: score one (LLM draft, clinician reply) pair and see why.

Runs the Gradio app of the `editf1` library (pip install "edit-f1[demo]"); the scoring
and the layout live in `editf1.integrations.demo`, so the Space and `edit-f1 demo` are one app.
"""

from editf1.integrations.demo import build_demo

demo = build_demo()

if __name__ == "__main__":
    demo.launch()
