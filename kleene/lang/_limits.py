"""Size limits of a query text, checked on the parse tree before anything recurses.

A number literal has at most ``MAX_NUMBER_LENGTH`` characters and a string literal at
most ``MAX_STRING_LENGTH``. An expression nests at most ``MAX_DEPTH`` levels: each
operator, ``not``, unary minus and pair of parentheses adds one, and a chain
``x or y or z`` of n terms (likewise ``and``, ``+``, ``*``) adds n - 1, which bounds its
width too. The top-level ``and`` of WHERE joins separate conjuncts and adds nothing, so
the number of conjuncts is not limited. Every later stage (AST walks, the oracle, the
generated edge code, whose parentheses Python allows 200 deep) may then recurse over
an expression safely. docs/language.md, "Limits", states the values.
"""

from __future__ import annotations

from collections.abc import Callable

from lark import Token, Tree

from kleene.errors import QuerySyntaxError, line_starts, position

MAX_NUMBER_LENGTH = 100
MAX_STRING_LENGTH = 10_000
MAX_DEPTH = 100

_CHAINS = frozenset({"or_op", "and_op"})
_LEVELS = frozenset({"not_op", "compare", "add", "subtract", "arith", "neg", "paren"})
_WHERE = frozenset({"where_function", "where_block", "where_flat", "where_plain"})
_CHAIN_WORDS = {"or_op": "or", "and_op": "and"}

Fail = Callable[[str, int | None], QuerySyntaxError]


def check_limits(tree: Tree, text: str) -> None:
    """Raises QuerySyntaxError at the first literal or expression over its limit."""
    starts = line_starts(text)

    def fail(message: str, offset: int | None) -> QuerySyntaxError:
        line, column = position(text, offset or 0, starts)
        return QuerySyntaxError(message, line=line, column=column, text=text)

    height: dict[int, int] = {}
    # Post-order without recursion: (node, whether its children are done, parent rule)
    stack: list[tuple[Tree, bool, str]] = [(tree, False, "")]
    while stack:
        node, done, parent = stack.pop()
        if not done:
            stack.append((node, True, parent))
            for child in node.children:
                if isinstance(child, Tree):
                    stack.append((child, False, node.data))
                elif isinstance(child, Token):
                    _check_literal(child, fail)
            continue
        below = [height.pop(id(c), 0) for c in node.children if isinstance(c, Tree)]
        deepest = max(below, default=0)
        if node.data in _CHAINS and not (node.data == "and_op" and parent in _WHERE):
            operands = [c for c in node.children if isinstance(c, Tree | Token)]
            terms = [c for c in operands if not _is_operator(c)]
            if len(terms) - 1 > MAX_DEPTH:
                extra = terms[MAX_DEPTH + 1]
                raise fail(
                    f"this '{_CHAIN_WORDS[node.data]}' chain has more than {MAX_DEPTH + 1} "
                    "terms (the limit of an expression's width): group them in parentheses, as in "
                    "(x or y) or (z or w)",
                    _start(extra),
                )
            deepest += len(terms) - 1
        elif node.data in _LEVELS:
            deepest += 1
        if deepest > MAX_DEPTH:
            raise fail(
                f"this expression nests more than {MAX_DEPTH} levels deep (the limit); "
                "write it with fewer nested operators and parentheses",
                _start(node),
            )
        height[id(node)] = deepest


def _is_operator(node: Tree | Token) -> bool:
    return isinstance(node, Token) and node.type in ("AND", "AMPERSANDS", "WEDGE", "OR")


def _start(node: Tree | Token) -> int | None:
    """Where a node's own operator is written (its first token), else where it starts."""
    if isinstance(node, Token):
        return node.start_pos
    own = next((c for c in node.children if isinstance(c, Token)), None)
    if own is not None:
        return own.start_pos
    return None if node.meta.empty else node.meta.start_pos


def _check_literal(token: Token, fail: Fail) -> None:
    if token.type == "NUMBER" and len(token) > MAX_NUMBER_LENGTH:
        raise fail(
            f"this number has {len(token)} characters; a number literal may have at most "
            f"{MAX_NUMBER_LENGTH}",
            token.start_pos,
        )
    if token.type == "STRING" and len(token) - 2 > MAX_STRING_LENGTH:
        raise fail(
            f"this string has {len(token) - 2} characters; a string literal may have at most "
            f"{MAX_STRING_LENGTH}",
            token.start_pos,
        )
