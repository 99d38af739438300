# ruff: noqa: RUF001 (the homoglyphs are the point)
"""A third labelled set for tombstones by meaning, written before the two bands (hard block,
review) and the near-miss guard were tuned, and never used to tune them: its own forgotten
facts, the same facts reworded, near misses (the same subject, another or the opposite fact)
and unrelated facts.
"""

from __future__ import annotations

from tests.data.rewordings import How

FORGOTTEN: list[str] = [
    "The user's husband is called Tomás",
    "The user takes antidepressants",
    "The user lost their job in October",
    "The user is scared of deep water",
    "The user's son is in hospital",
    "The user does not eat pork",
    "The user's rent is 900 euros a month",
    "The user is in debt to the bank",
    "The user's best friend is Amira",
    "The user had surgery on their knee",
    "The user dislikes their manager",
    "The user smokes ten cigarettes a day",
]

# (forgotten, the same fact reworded, how)
REWORDINGS: list[tuple[str, str, How]] = [
    ("The user's husband is called Tomás", "The user's spouse is named Tomás", "synonym"),
    ("The user's husband is called Tomás", "Tomás is the user's husband", "paraphrase"),
    ("The user takes antidepressants", "The user is on antidepressant medication", "paraphrase"),
    ("The user lost their job in October", "The user was laid off in October", "synonym"),
    ("The user lost their job in October", "In October the user became unemployed", "paraphrase"),
    ("The user is scared of deep water", "The user is afraid of deep water", "synonym"),
    (
        "The user's son is in hospital",
        "The user's son has been admitted to hospital",
        "paraphrase",
    ),
    ("The user does not eat pork", "The user doesn't eat pork", "paraphrase"),
    ("The user does not eat pork", "The user avoids eating pork", "synonym"),
    (
        "The user's rent is 900 euros a month",
        "The user pays 900 euros in rent each month",
        "paraphrase",
    ),
    ("The user is in debt to the bank", "The user owes money to the bank", "synonym"),
    ("The user's best friend is Amira", "Amira is the user's closest friend", "paraphrase"),
    ("The user had surgery on their knee", "The user had knee surgery", "paraphrase"),
    ("The user dislikes their manager", "The user can't stand their boss", "synonym"),
    ("The user smokes ten cigarettes a day", "The user smokes 10 cigarettes daily", "synonym"),
    ("The user's husband is called Tomás", "El marido de la usuaria se llama Tomás", "language"),
    ("The user takes antidepressants", "L'utilisateur prend des antidépresseurs", "language"),
    (
        "The user lost their job in October",
        "Der Nutzer hat im Oktober seinen Job verloren",
        "language",
    ),
    ("The user's son is in hospital", "O filho do usuário está no hospital", "language"),
    ("The user does not eat pork", "L'utente non mangia carne di maiale", "language"),
    ("The user's husband is called Tomás", "The user's husband is called Tоmás", "homoglyph"),
    ("The user takes antidepressants", "The user takes аntidepressants", "homoglyph"),
    ("The user's rent is 900 euros a month", "Тhe user's rent is 900 euros a month", "homoglyph"),
    (
        "The user smokes ten cigarettes a day",
        "The user smokes ten ｃｉｇａｒｅｔｔｅｓ a day",
        "homoglyph",
    ),
]

# The same subject as a forgotten fact, but another or the opposite fact: never hard-blocked.
NEAR_MISSES: list[str] = [
    "The user's brother is called Tomás",
    "The user's husband is called Diego",
    "The user stopped taking antidepressants",
    "The user found a job in October",
    "The user lost their job in March",
    "The user is no longer scared of deep water",
    "The user's daughter is in hospital",
    "The user's son works in a hospital",
    "The user eats pork",
    "The user does not eat beef",
    "The user's rent is 1200 euros a month",
    "The user's salary is 900 euros a month",
    "The user paid off their debt to the bank",
    "The user's best friend is Jonas",
    "Amira is the user's colleague",
    "The user had surgery on their shoulder",
    "The user likes their manager",
    "The user's manager dislikes them",
    "The user smokes two cigarettes a day",
    "The user quit smoking",
]

UNRELATED: list[str] = [
    "The user's husband plays football on Sundays",
    "The user takes vitamin D in winter",
    "The user started a new course in October",
    "The user swims in the sea every summer",
    "The user's son plays the trumpet",
    "The user cooks pasta on Fridays",
    "The user's flat is on the third floor",
    "The user opened a savings account",
    "The user met Amira at university",
    "The user goes to physiotherapy on Thursdays",
    "The user's manager is on holiday this week",
    "The user wants to buy an electric bike",
    "The user grew up in Valencia",
    "The user's daughter is learning to swim",
    "The user likes jazz music",
    "The user is allergic to shellfish",
    "The user prefers tea over coffee",
    "The user has a vegetable garden",
    "The user drives a grey Toyota",
    "The user is reading a book about Roman history",
    "The user's laptop is a ThinkPad",
    "The user wakes up at six every day",
    "The user supports a local football club",
    "The user is planning a trip to Japan",
    "The user's favourite film is Casablanca",
    "The user works from home on Mondays",
    "The user has a cat named Luna",
    "The user knits scarves for friends",
    "The user studied chemistry",
    "The user's phone number changed last year",
    "The user is saving for a house",
    "The user bakes bread at the weekend",
    "The user listens to podcasts while running",
    "The user's father is a retired pilot",
    "The user volunteers at a food bank",
    "The user uses a standing desk",
    "The user dislikes loud restaurants",
    "The user has a brother in Canada",
    "The user writes poetry in the evenings",
    "The user celebrates Christmas with their in-laws",
]
