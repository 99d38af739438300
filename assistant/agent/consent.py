"""Whether a user's message is an explicit yes or no (to a question about a pinned memory).

Only a message that starts with a yes and says no "not" anywhere is a yes; one that starts with
a no is a no; anything else answers nothing (the question stays open). English and the common
words of a few other languages are known.
"""

from __future__ import annotations

import re
from typing import Literal

Consent = Literal["yes", "no"]

_YES = frozenset(
    "yes y yeah yep yup sure ok okay confirm confirmed absolutely please go agreed correct "
    "ja jawohl oui si sí sim да так tak evet はい 是 是的 好 네 ano kyllä igen da "
    "\u03bd\u03b1\u03b9 כן نعم".split()  # Greek "nai"
)
_NO = frozenset(
    "no n nope nah don't dont never cancel keep stop nein non нет ні nie não nao "
    "hay\u0131r いいえ 不 不要 아니 아니요 ne ei nem \u03cc\u03c7\u03b9 לא لا".split()
)
# Words that turn a yes into something else: "yes, but don't", "ja, aber nicht".
_NEGATIONS = _NO | frozenset("not don't doesn't shouldn't nicht pas".split())
_WORD = re.compile(r"[\w']+")


def explicit_answer(text: str) -> Consent | None:
    """ "yes", "no", or None when `text` is not plainly either."""
    words = _WORD.findall(text.casefold().replace("\u2019", "'"))
    if not words:
        return None
    if words[0] in _NO:
        return "no"
    if words[0] in _YES and not any(w in _NEGATIONS for w in words[1:]):
        return "yes"
    return None
