"""Numbers read the same everywhere: grouped as the locale groups them (also in the "C"
locale), and a reply's speed only when it was measured over enough tokens and time."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QLocale

from assistant.memory import ReplyStats
from assistant.ui.chat.reply_details import stats_details, stats_line
from assistant.ui.wording import decimal, number


@pytest.fixture
def locale_c(qapp: object) -> Iterator[None]:
    previous = QLocale()
    QLocale.setDefault(QLocale.c())
    yield
    QLocale.setDefault(previous)


def test_numbers_are_grouped_even_in_the_c_locale(locale_c: None) -> None:
    assert number(2624) == "2,624"
    assert decimal(45500.0, 0) == "45,500"
    QLocale.setDefault(QLocale(QLocale.Language.German, QLocale.Country.Germany))
    assert (number(2624), decimal(1234.5, 1)) == ("2.624", "1.234,5")


@pytest.mark.parametrize(
    ("tokens", "seconds", "speed"),
    [
        (7, 0.001, None),  # "6000.0 tok/s" from a reply that came in one piece
        (92, 0.003, None),  # "30333.3 tok/s": all at once, however long
        (11, 2.0, "5.0 tok/s"),
        (101, 2.0, "50 tok/s"),
        (2501, 2.0, "1,250 tok/s"),
    ],
)
def test_a_speed_shows_only_when_measured_with_its_precision(
    locale_c: None, tokens: int, seconds: float, speed: str | None
) -> None:
    stats = ReplyStats("fake-chat", 1200, tokens, 0.2, seconds)
    line = stats_line(stats)
    assert line.startswith(f"fake-chat · {number(tokens)} tokens")
    if speed is None:
        assert "tok/s" not in line and "tokens/s" not in stats_details(stats)
    else:
        assert line.endswith(f" · {speed}")
    assert "Prompt: 1,200 tokens" in stats_details(stats)
