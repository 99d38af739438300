"""The sidebar's rich-text pages: the working memory, and a conversation's instructions, summary
and topics."""

from __future__ import annotations

import html

from PySide6.QtGui import QPalette

from assistant.instructions import Instructions
from assistant.memory import Topic, WorkingMemory
from assistant.ui.theme import mix, muted
from assistant.ui.wording import count

EMPTY_WORKING = "No task in progress."
EMPTY_SUMMARY = "No summary yet — it appears when a conversation grows long."
NO_INSTRUCTIONS = (
    "No custom instructions. Edit > Custom Instructions… tells Assistant about you and how to "
    "answer, in every chat."
)
NO_TOPICS = (
    "No topics yet. The topics of what Assistant learns or recalls in this conversation show here."
)


def css(palette: QPalette) -> dict[str, str]:
    """The page colours by name: muted, accent, tint and rule."""
    accent = palette.color(QPalette.ColorRole.Highlight)
    base = palette.color(QPalette.ColorRole.Base)
    return {
        "muted": muted(palette).name(),
        "accent": mix(accent, palette.color(QPalette.ColorRole.Text), 0.2).name(),
        "tint": mix(base, accent, 0.13).name(),
        "rule": mix(base, palette.color(QPalette.ColorRole.Text), 0.12).name(),
    }


def section(title: str, color: str) -> str:
    """A small upper-case section heading."""
    return (
        f"<p style='margin-top:14px; margin-bottom:4px; color:{color}; font-size:small; "
        f"font-weight:600'>{html.escape(title.upper())}</p>"
    )


def paragraphs(text: str) -> str:
    """`text`, escaped, its lines kept."""
    return "<br>".join(html.escape(line) for line in text.strip().splitlines())


def empty(title: str, body: str, color: str) -> str:
    """A centred title and a `color`ed explanation, for a page with nothing to show."""
    # A blank first paragraph: QTextDocument ignores the top margin of the first block.
    return (
        "<p style='margin:0'>&nbsp;</p>"
        f"<p align='center' style='margin-top:48px; font-size:large; font-weight:600'>"
        f"{html.escape(title)}</p>"
        f"<p align='center' style='color:{color}'>{html.escape(body)}</p>"
    )


def working_memory_html(working: WorkingMemory, palette: QPalette) -> str:
    """The working memory as HTML: task, subgoals (current highlighted), notes and results."""
    c = css(palette)
    if working.is_empty():
        return empty(
            EMPTY_WORKING,
            "When Assistant works through a multi-step task, its plan and notes show up here.",
            c["muted"],
        )
    parts: list[str] = []
    if working.task:
        parts.append(section("Task", c["muted"]))
        parts.append(f"<p style='font-size:medium; font-weight:600'>{paragraphs(working.task)}</p>")
    if working.subgoals:
        parts.append(section("Subgoals", c["muted"]))
        rows = []
        last = len(working.subgoals) - 1
        for n, goal in enumerate(working.subgoals):
            if n == last:
                rows.append(
                    f"<tr><td width='16' bgcolor='{c['tint']}' style='color:{c['accent']}'>●</td>"
                    f"<td bgcolor='{c['tint']}'><b>{paragraphs(goal)}</b><br>"
                    f"<span style='color:{c['accent']}; font-size:small'>Current step</span>"
                    "</td></tr>"
                )
            else:
                rows.append(
                    f"<tr><td width='16' style='color:{c['muted']}'>○</td>"
                    f"<td style='color:{c['muted']}'>{paragraphs(goal)}</td></tr>"
                )
        parts.append(
            "<table width='100%' cellspacing='0' cellpadding='4'>" + "".join(rows) + "</table>"
        )
    if working.scratchpad:
        parts.append(section("Scratchpad", c["muted"]))
        rows = [
            f"<tr><td width='16' style='color:{c['muted']}'>•</td><td>{paragraphs(note)}</td></tr>"
            for note in working.scratchpad
        ]
        parts.append(
            "<table width='100%' cellspacing='0' cellpadding='4'>" + "".join(rows) + "</table>"
        )
    if working.results:
        parts.append(section("Results", c["muted"]))
        rows = [
            f"<tr><td style='color:{c['muted']}' width='35%'>{html.escape(name)}</td>"
            f"<td>{paragraphs(value)}</td></tr>"
            for name, value in working.results.items()
        ]
        parts.append(
            "<table width='100%' cellspacing='0' cellpadding='4'>" + "".join(rows) + "</table>"
        )
    return "".join(parts)


def instructions_html(instructions: Instructions, color: str) -> str:
    """The custom instructions the model is given, each under its question (`color`ed)."""
    parts = [section("Instructions", color)]
    if instructions.empty:
        parts.append(f"<p style='color:{color}'>{html.escape(NO_INSTRUCTIONS)}</p>")
    for label, text in instructions.sections():
        parts.append(
            f"<p style='margin-top:8px; margin-bottom:2px; color:{color}; font-size:small'>"
            f"{html.escape(label)}</p><p style='margin-top:0'>{paragraphs(text)}</p>"
        )
    return "".join(parts)


def conversation_html(
    summary: str, topics: list[Topic], palette: QPalette, instructions: Instructions
) -> str:
    """A conversation's custom instructions, rolling summary and topics, as HTML."""
    c = css(palette)
    parts = [instructions_html(instructions, c["muted"]), section("Summary", c["muted"])]
    if summary.strip():
        parts.append(f"<p>{paragraphs(summary)}</p>")
    else:
        parts.append(f"<p style='color:{c['muted']}'>{html.escape(EMPTY_SUMMARY)}</p>")
    parts.append(section("Topics", c["muted"]))
    if not topics:
        parts.append(f"<p style='color:{c['muted']}'>{html.escape(NO_TOPICS)}</p>")
    for topic in topics:
        parts.append(
            f"<p style='margin-top:8px; margin-bottom:2px; font-weight:600'>"
            f"{html.escape(topic.name.capitalize())}"
            f" <span style='color:{c['muted']}; font-weight:normal; font-size:small'>· "
            f"{count(len(topic.memory_ids), 'memory', 'memories')}"
            f"</span></p>"
        )
        if topic.summary:
            parts.append(f"<p style='margin-top:0'>{paragraphs(topic.summary)}</p>")
    return "".join(parts)
