"""Calculator: arithmetic over an allow-list of AST nodes, bounded, with clear refusals."""

from __future__ import annotations

import math

import pytest

from assistant.agent.calculator import (
    MAX_EXPRESSION_CHARS,
    MAX_FACTORIAL,
    evaluate,
    format_result,
)
from assistant.errors import ToolError


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("2 + 3 * 4", 14),
        ("(2 + 3) * 4", 20),
        ("2 ** 3 ** 2", 512),
        ("-2 ** 2", -4),
        ("+-+3", -3),
        ("7 / 2", 3.5),
        ("7 // 2", 3),
        ("-7 // 2", -4),
        ("7 % 3", 1),
        ("2 ** -2", 0.25),
        ("1.5e3 + 0.5", 1500.5),
        ("10 - 4 - 3", 3),
        ("2 ** 100", 2**100),
        ("  1 + 1\n", 2),
    ],
)
def test_arithmetic_and_precedence(expression: str, expected: float) -> None:
    result = evaluate(expression)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("sqrt(16)", 4.0),
        ("log(e)", 1.0),
        ("log(8, 2)", 3.0),
        ("log10(1000)", 3.0),
        ("log2(8)", 3.0),
        ("exp(0)", 1.0),
        ("sin(0) + cos(0) + tan(0)", 1.0),
        ("asin(1) * 2", math.pi),
        ("acos(1) + atan(0)", 0.0),
        ("atan2(1, 1) * 4", math.pi),
        ("sinh(0) + cosh(0) + tanh(0)", 1.0),
        ("floor(2.7) + ceil(2.1)", 5),
        ("fabs(-2) + abs(-3)", 5.0),
        ("round(2.567, 2)", 2.57),
        ("round(2.5)", 2),
        ("round(1234, -2)", 1200),
        ("min(3, 1, 2) + max(4, 5)", 6),
        ("factorial(5)", 120),
        ("hypot(3, 4)", 5.0),
        ("degrees(pi)", 180.0),
        ("radians(180)", math.pi),
        ("pi", math.pi),
        ("e", math.e),
        ("tau / 2", math.pi),
        ("sqrt(sqrt(sqrt(256)))", 2.0),
    ],
)
def test_functions_and_constants(expression: str, expected: float) -> None:
    assert evaluate(expression) == pytest.approx(expected)


def test_bounds_that_are_allowed() -> None:
    assert evaluate(f"factorial({MAX_FACTORIAL})") == math.factorial(MAX_FACTORIAL)
    assert evaluate("2 ** 10000") == 2**10000
    assert evaluate("1" + "+1" * 150) == 151  # a long flat sum is not "deep"


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os').system('x')", "Attribute access is not allowed"),
        ("__import__('os')", "Function '__import__' is not allowed"),
        ("(1).__class__.__bases__", "Attribute access is not allowed"),
        ("(1).__class__", "Attribute access is not allowed"),
        ("(lambda: 1)()", "Lambda functions are not allowed"),
        ("[x for x in range(3)]", "Comprehensions are not allowed"),
        ("sum(x for x in (1, 2))", "Function 'sum' is not allowed"),
        ("max(x for x in (1, 2))", "Comprehensions are not allowed"),
        ('"a" * 3', "Strings are not allowed"),
        ("b'a'", "Strings are not allowed"),
        ("f'{1}'", "Strings are not allowed"),
        ("open('f')", "Function 'open' is not allowed. Allowed functions: sqrt, log,"),
        ("x", "Unknown name 'x'. Allowed constants: pi, e, tau."),
        ("1 if 1 else 2", "Conditional expressions (if/else) are not allowed"),
        ("(1, 2)[0]", "Subscripts (indexing) are not allowed"),
        ("[1, 2]", "Lists, tuples, sets and dicts are not allowed"),
        ("{1: 2}", "Lists, tuples, sets and dicts are not allowed"),
        ("round(2.5, ndigits=1)", "Keyword arguments are not allowed"),
        ("max(*(1, 2))", "Starred arguments are not allowed"),
        ("1 < 2", "Comparisons are not allowed"),
        ("1 and 2", "Boolean operators (and, or) are not allowed"),
        ("not 1", "Operator 'not' is not allowed"),
        ("2 ^ 3", "Operator '^' is not allowed; use ** for powers"),
        ("1 << 100000", "Operator '<<' is not allowed"),
        ("~1", "Operator '~' is not allowed"),
        ("(x := 1)", "Assignments are not allowed"),
        ("True + 1", "Only numbers are allowed, got True"),
        ("None", "Only numbers are allowed, got None"),
        ("1j", "Complex numbers are not allowed"),
        ("sqrt", "'sqrt' is a function; call it like sqrt(x)"),
        ("pi()", "'pi' is a constant, not a function"),
        ("sqrt(1, 2)", "sqrt() takes 1 argument(s), got 2"),
        ("log(1, 2, 3)", "log() takes 1 or 2 argument(s), got 3"),
        ("max()", "max() takes at least 1 argument(s), got 0"),
        ("(sqrt)(4)(2)", "Only the allowed functions can be called, by name"),
        ("1 +", "Could not parse the expression: invalid syntax"),
        ("import os", "Could not parse the expression: invalid syntax"),
        ("1\x00", "Could not parse the expression"),
        ("", "The expression is empty"),
        ("   ", "The expression is empty"),
    ],
)
def test_refusals(expression: str, message: str) -> None:
    with pytest.raises(ToolError) as info:
        evaluate(expression)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1 / 0", "Division by zero"),
        ("5 // 0", "Division by zero"),
        ("5 % 0.0", "Division by zero"),
        ("0 ** -1", "Division by zero"),
        ("log(2, 1)", "Division by zero"),
        ("sqrt(-1)", "sqrt() is not defined for this argument (math domain error)"),
        ("log(0)", "log() is not defined for this argument (math domain error)"),
        ("acos(2)", "acos() is not defined for this argument (math domain error)"),
        ("exp(1000)", "Result too large"),
        ("1e308 * 10", "Result too large"),
        ("1e999", "Result too large"),
        ("2.0 ** 100000", "Result too large"),
        ("10 ** 400 / 3", "Result too large"),
        ("sqrt(10 ** 400)", "Result too large"),
        ("(-8) ** (1 / 3)", "The result is not a real number"),
        ("factorial(-1)", "factorial() needs a whole number from 0 to 1000"),
        ("factorial(2.5)", "factorial() needs a whole number"),
        ("round(1.5, 0.5)", "round() needs a whole number of digits"),
        ("round(12345, -10 ** 9)", "round() needs a whole number of digits"),
    ],
)
def test_math_errors(expression: str, message: str) -> None:
    with pytest.raises(ToolError) as info:
        evaluate(expression)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    "expression",
    [
        "9**9**9",
        "10**100000",
        "factorial(10**6)",
        "2**(2**64)",
        "(-3)**99999",
        "3**10000",  # under the exponent bound, over the digits bound
        "(10**3000) * (10**3000)",
        "10**3000 * 10**3000 * 10**3000",
        "factorial(1000) ** 2",
        "99999999**9999",
    ],
)
def test_huge_results_are_refused_before_they_are_computed(expression: str) -> None:
    with pytest.raises(ToolError, match=r"too large|needs a whole number from 0 to 1000"):
        evaluate(expression)


def test_size_and_depth_bounds() -> None:
    with pytest.raises(ToolError, match="too long"):
        evaluate("1+" * MAX_EXPRESSION_CHARS + "1")
    with pytest.raises(ToolError, match="Could not parse the expression: too many nested"):
        evaluate("(" * 220 + "1" + ")" * 220)
    with pytest.raises(ToolError, match="nested too deeply"):
        evaluate("-" * 300 + "1")
    assert evaluate("-(" * 150 + "1" + ")" * 150) == 1


@pytest.mark.parametrize(
    ("value", "text"),
    [(14, "14"), (2**70, str(2**70)), (0.1 + 0.2, "0.3"), (4.0, "4"), (1e20, "1e+20")],
)
def test_format_result(value: float, text: str) -> None:
    assert format_result(value) == text
