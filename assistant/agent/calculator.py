"""The calculator's engine: evaluates an allow-list of arithmetic AST nodes, never `eval`."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable

from assistant.errors import ToolError

Number = int | float

MAX_EXPRESSION_CHARS = 500
MAX_DEPTH = 200
MAX_EXPONENT = 10_000
MAX_INT_BITS = 13_000  # about 3,900 digits, under Python's 4,300-digit str() limit
MAX_FACTORIAL = 1000
MAX_ROUND_DIGITS = 1000


def _factorial(n: Number) -> int:
    if type(n) is not int or not 0 <= n <= MAX_FACTORIAL:
        raise ToolError(f"factorial() needs a whole number from 0 to {MAX_FACTORIAL}.")
    return math.factorial(n)


def _round(x: Number, ndigits: Number | None = None) -> Number:
    if ndigits is None:
        return round(x)
    if type(ndigits) is not int or abs(ndigits) > MAX_ROUND_DIGITS:
        raise ToolError(f"round() needs a whole number of digits, at most {MAX_ROUND_DIGITS}.")
    return round(x, ndigits)


def _min(*args: Number) -> Number:
    return min(args)


def _max(*args: Number) -> Number:
    return max(args)


# name -> (function, fewest arguments, most arguments or None for any number)
_FUNCTIONS: dict[str, tuple[Callable[..., Number], int, int | None]] = {
    "sqrt": (math.sqrt, 1, 1),
    "log": (math.log, 1, 2),
    "log10": (math.log10, 1, 1),
    "log2": (math.log2, 1, 1),
    "exp": (math.exp, 1, 1),
    "sin": (math.sin, 1, 1),
    "cos": (math.cos, 1, 1),
    "tan": (math.tan, 1, 1),
    "asin": (math.asin, 1, 1),
    "acos": (math.acos, 1, 1),
    "atan": (math.atan, 1, 1),
    "atan2": (math.atan2, 2, 2),
    "sinh": (math.sinh, 1, 1),
    "cosh": (math.cosh, 1, 1),
    "tanh": (math.tanh, 1, 1),
    "floor": (math.floor, 1, 1),
    "ceil": (math.ceil, 1, 1),
    "fabs": (math.fabs, 1, 1),
    "abs": (abs, 1, 1),
    "round": (_round, 1, 2),
    "min": (_min, 1, None),
    "max": (_max, 1, None),
    "factorial": (_factorial, 1, 1),
    "hypot": (math.hypot, 1, None),
    "degrees": (math.degrees, 1, 1),
    "radians": (math.radians, 1, 1),
}

_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _power(base: Number, exponent: Number) -> Number:
    if type(base) is int and type(exponent) is int:
        if abs(exponent) > MAX_EXPONENT:
            raise ToolError(f"Result too large: the exponent {exponent} is over {MAX_EXPONENT}.")
        # (bits - 1) * exponent is a lower bound of the result's size: reject before computing.
        if exponent > 0 and (abs(base).bit_length() - 1) * exponent > MAX_INT_BITS:
            raise ToolError(f"Result too large: {base}**{exponent} has too many digits.")
    return base**exponent


_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _power,
}

_REFUSED_OPERATORS: dict[type[ast.AST], str] = {
    ast.BitXor: "Operator '^' is not allowed; use ** for powers.",
    ast.BitAnd: "Operator '&' is not allowed.",
    ast.BitOr: "Operator '|' is not allowed.",
    ast.LShift: "Operator '<<' is not allowed.",
    ast.RShift: "Operator '>>' is not allowed.",
    ast.MatMult: "Operator '@' is not allowed.",
    ast.Invert: "Operator '~' is not allowed.",
    ast.Not: "Operator 'not' is not allowed.",
}

_REFUSED_NODES: dict[type[ast.AST], str] = {
    ast.Attribute: "Attribute access is not allowed.",
    ast.Subscript: "Subscripts (indexing) are not allowed.",
    ast.Lambda: "Lambda functions are not allowed.",
    ast.ListComp: "Comprehensions are not allowed.",
    ast.SetComp: "Comprehensions are not allowed.",
    ast.DictComp: "Comprehensions are not allowed.",
    ast.GeneratorExp: "Comprehensions are not allowed.",
    ast.Compare: "Comparisons are not allowed.",
    ast.BoolOp: "Boolean operators (and, or) are not allowed.",
    ast.IfExp: "Conditional expressions (if/else) are not allowed.",
    ast.NamedExpr: "Assignments are not allowed.",
    ast.Starred: "Starred arguments are not allowed.",
    ast.JoinedStr: "Strings are not allowed.",
    ast.List: "Lists, tuples, sets and dicts are not allowed.",
    ast.Tuple: "Lists, tuples, sets and dicts are not allowed.",
    ast.Set: "Lists, tuples, sets and dicts are not allowed.",
    ast.Dict: "Lists, tuples, sets and dicts are not allowed.",
}


def evaluate(expression: str) -> Number:
    """Evaluate an arithmetic expression; anything not allowed or unbounded raises ToolError."""
    text = expression.strip()
    if not text:
        raise ToolError("The expression is empty.")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ToolError(f"The expression is too long (over {MAX_EXPRESSION_CHARS} characters).")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"Could not parse the expression: {exc.msg}.") from None
    except ValueError as exc:  # e.g. null bytes
        raise ToolError(f"Could not parse the expression: {exc}.") from None
    try:
        return _eval(tree.body, 0)
    except ZeroDivisionError:
        raise ToolError("Division by zero.") from None
    except OverflowError as exc:
        raise ToolError(f"Result too large ({exc}).") from None


def format_result(value: Number) -> str:
    """The value as text for the model: integers exactly, floats to 15 significant digits."""
    return str(value) if isinstance(value, int) else format(value, ".15g")


def _eval(node: ast.AST, depth: int) -> Number:
    if depth > MAX_DEPTH:
        raise ToolError(f"The expression is nested too deeply (over {MAX_DEPTH} levels).")
    if isinstance(node, ast.Constant):
        return _number(node.value)
    if isinstance(node, ast.Name):
        return _constant(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        operand = _eval(node.operand, depth + 1)
        return operand if isinstance(node.op, ast.UAdd) else -operand
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _eval(node.left, depth + 1)
        right = _eval(node.right, depth + 1)
        return _checked(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.Call):
        return _call(node, depth)
    raise ToolError(_refusal(node, f"{type(node).__name__} expressions are not allowed."))


def _number(value: object) -> Number:
    if type(value) is int or type(value) is float:
        return _checked(value)
    if isinstance(value, str | bytes):
        raise ToolError("Strings are not allowed; use numbers only.")
    if isinstance(value, complex):
        raise ToolError("Complex numbers are not allowed.")
    raise ToolError(f"Only numbers are allowed, got {value!r}.")


def _constant(name: str) -> float:
    if name in _CONSTANTS:
        return _CONSTANTS[name]
    if name in _FUNCTIONS:
        raise ToolError(f"'{name}' is a function; call it like {name}(x).")
    raise ToolError(f"Unknown name '{name}'. Allowed constants: {', '.join(_CONSTANTS)}.")


def _call(node: ast.Call, depth: int) -> Number:
    if not isinstance(node.func, ast.Name):
        raise ToolError(_refusal(node.func, "Only the allowed functions can be called, by name."))
    name = node.func.id
    if name in _CONSTANTS:
        raise ToolError(f"'{name}' is a constant, not a function.")
    if name not in _FUNCTIONS:
        raise ToolError(
            f"Function '{name}' is not allowed. Allowed functions: {', '.join(_FUNCTIONS)}."
        )
    if node.keywords:
        raise ToolError("Keyword arguments are not allowed.")
    func, fewest, most = _FUNCTIONS[name]
    if not fewest <= len(node.args) <= (most or len(node.args)):
        if most is None:
            expected = f"at least {fewest}"
        else:
            expected = str(fewest) if most == fewest else f"{fewest} or {most}"
        raise ToolError(f"{name}() takes {expected} argument(s), got {len(node.args)}.")
    args = [_eval(arg, depth + 1) for arg in node.args]
    try:
        return _checked(func(*args))
    except ValueError:
        raise ToolError(f"{name}() is not defined for this argument (math domain error).") from None


def _refusal(node: ast.AST, default: str) -> str:
    if isinstance(node, ast.UnaryOp | ast.BinOp):
        return _REFUSED_OPERATORS[type(node.op)]
    return _REFUSED_NODES.get(type(node), default)


def _checked(value: object) -> Number:
    """The value if it is a finite real number of bounded size; ToolError otherwise."""
    if type(value) is int:
        if value.bit_length() > MAX_INT_BITS:
            raise ToolError("Result too large: integers are limited to about 3,900 digits.")
        return value
    if type(value) is float:
        if not math.isfinite(value):
            raise ToolError("Result too large (overflow).")
        return value
    raise ToolError("The result is not a real number.")
