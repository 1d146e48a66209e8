"""GraphHopper's custom models, parsed once and evaluated over every road arc at once (numpy, no per-arc Python).

A model (GraphHopper's JSON, `docs/core/custom-models.md`) says how a request's weighting departs from the profile's:

    {"speed": [{"if": "road_class == MOTORWAY", "multiply_by": "0.8"}],
     "priority": [{"if": "toll == ALL || max_height < 4", "multiply_by": "0"}],
     "distance_influence": 30,
     "areas": {"type": "FeatureCollection", "features": [{"id": "centre", "type": "Feature", "geometry": ...}]}}

`speed` and `priority` are lists of statements: `if` / `else_if` / `else` (a group starts with `if`; in a group the
first statement whose condition holds applies, later groups apply on top), each with one operation: `multiply_by`
(a factor), `limit_to` (a ceiling) or `do` (a nested list). Conditions compare GraphHopper's encoded values
(`floor.format.encoded_values`: enums with `==`/`!=`, numbers with `== != < <= > >=`, booleans bare or negated),
combined with `&&`, `||`, `!` and parentheses; `in_<id>` is true on the arcs whose shape meets the area `<id>`;
`true`/`false` are literals. Values are numbers or arithmetic over numbers and numeric encoded values
(`"limit_to": "max_speed * 0.9"`).

`parse_model(obj)` checks everything it can without a graph (syntax, names, constants, value ranges) and raises
`InvalidValue` naming the rule (`priority[1]`) and the reason; `evaluate(model, ctx)` gives per road arc the model's
speed (km/h, from the arc's own speed) and priority (0..1). `CustomModel.key` hashes the model's canonical JSON: the
engine caches what it builds per key (`app.engine.models.model_metric`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.engine.errors import InvalidValue
from floor.format.encoded_values import ENCODED_VALUES, MissingValue, arc_values, has_value

MAX_STATEMENTS = 200  # per model, nested ones included
MAX_CONDITION_CHARS = 2000
KEYWORDS = ("if", "else_if", "else")
OPERATIONS = ("multiply_by", "limit_to", "do")
TOP_LEVEL = ("speed", "priority", "distance_influence", "areas")

# -- expressions ---------------------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[<>!()*/+-]))"
)
_CMP = ("==", "!=", "<", "<=", ">", ">=")
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


class _Bad(Exception):
    """A reason a condition or value is refused (wrapped into `InvalidValue` with the rule's name)."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise _Bad(f"unexpected character {text[pos:].strip()[:1]!r} at position {pos}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class ArcContext:
    """What conditions read: one value per road arc of one graph (decoded once per name), and the arcs meeting each
    area of the model (`areas(id) -> bool per arc`, given by the engine)."""

    def __init__(self, arrays: Mapping[str, np.ndarray], n: int, areas: Callable[[str], np.ndarray]) -> None:
        self.arrays = arrays
        self.n = n
        self._areas = areas
        self._cache: dict[str, np.ndarray] = {}

    def value(self, name: str) -> np.ndarray:
        got = self._cache.get(name)
        if got is None:
            if name.startswith("in_"):
                got = self._areas(name[3:])
            else:
                got = arc_values(self.arrays, name)
            self._cache[name] = got
        return got


Cond = Callable[[ArcContext], "np.ndarray | bool"]
Value = Callable[[ArcContext], "np.ndarray | float"]


class _Parser:
    """Recursive descent over one condition or value (GraphHopper's Java subset)."""

    def __init__(self, text: str, areas: frozenset[str], names: set[str]) -> None:
        if len(text) > MAX_CONDITION_CHARS:
            raise _Bad(f"longer than {MAX_CONDITION_CHARS} characters")
        self.toks = _tokens(text)
        self.i = 0
        self.areas = areas
        self.names = names  # encoded values used, collected for the graph check

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise _Bad("unexpected end")
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expect(self, text: str) -> None:
        kind, got = self.take()
        if got != text:
            raise _Bad(f"expected {text!r}, found {got!r}")

    def done(self) -> None:
        if self.i < len(self.toks):
            raise _Bad(f"unexpected {self.toks[self.i][1]!r} after a complete expression")

    # conditions: or := and ('||' and)* ; and := unary ('&&' unary)* ; unary := '!' unary | '(' or ')' | atom
    def condition(self) -> Cond:
        c = self._or()
        self.done()
        return c

    def _or(self) -> Cond:
        parts = [self._and()]
        while self.peek() == "||":
            self.take()
            parts.append(self._and())
        if len(parts) == 1:
            return parts[0]

        def any_of(ctx: ArcContext) -> np.ndarray | bool:
            out: np.ndarray | bool = False
            for p in parts:
                out = np.logical_or(out, p(ctx))
            return out

        return any_of

    def _and(self) -> Cond:
        parts = [self._unary()]
        while self.peek() == "&&":
            self.take()
            parts.append(self._unary())
        if len(parts) == 1:
            return parts[0]

        def all_of(ctx: ArcContext) -> np.ndarray | bool:
            out: np.ndarray | bool = True
            for p in parts:
                out = np.logical_and(out, p(ctx))
            return out

        return all_of

    def _unary(self) -> Cond:
        if self.peek() == "!":
            self.take()
            inner = self._unary()
            return lambda ctx: np.logical_not(inner(ctx))
        if self.peek() == "(":
            self.take()
            inner = self._or()
            self.expect(")")
            return inner
        return self._atom()

    def _atom(self) -> Cond:
        kind, tok = self.take()
        if kind == "name" and tok in ("true", "false"):
            lit = tok == "true"
            return lambda ctx: lit
        if kind == "num":  # a number first: `4 > max_height`
            op = self.take()[1]
            if op not in _CMP:
                raise _Bad(f"expected a comparison after {tok}, found {op!r}")
            k2, name = self.take()
            if k2 != "name":
                raise _Bad(f"expected an encoded value after {tok} {op}, found {name!r}")
            return self._compare(name, _FLIP[op], kind, tok)
        if kind != "name":
            raise _Bad(f"expected a condition, found {tok!r}")
        name = tok
        if self.peek() in _CMP:
            op = self.take()[1]
            k2, rhs = self.take()
            return self._compare(name, op, k2, rhs)
        return self._boolean(name)

    def _known(self, name: str) -> str:
        if name.startswith("in_"):
            if name[3:] not in self.areas:
                have = ", ".join(sorted(self.areas)) or "none"
                raise _Bad(f"{name}: the model's areas have no feature with id {name[3:]!r} (areas: {have})")
            return "bool"
        ev = ENCODED_VALUES.get(name)
        if ev is None:
            raise _Bad(f"unknown encoded value {name!r} (known: {', '.join(sorted(ENCODED_VALUES))}, in_<area id>)")
        self.names.add(name)
        return ev.kind

    def _boolean(self, name: str) -> Cond:
        kind = self._known(name)
        if kind != "bool":
            raise _Bad(f"{name} is {'an enum' if kind == 'enum' else 'a number'}: compare it (e.g. {name} == ...)")
        return lambda ctx: ctx.value(name)

    def _compare(self, name: str, op: str, rkind: str, rhs: str) -> Cond:
        kind = self._known(name)
        if kind == "enum":
            consts = ENCODED_VALUES[name].constants
            if op not in ("==", "!="):
                raise _Bad(f"{name} is an enum: compare it with == or !=, not {op}")
            if rkind != "name" or rhs not in consts:
                raise _Bad(f"{rhs!r} is no value of {name} (values: {', '.join(consts)})")
            code = consts.index(rhs)
            if op == "==":
                return lambda ctx: ctx.value(name) == code
            return lambda ctx: ctx.value(name) != code
        if kind == "bool":
            if op not in ("==", "!=") or rhs not in ("true", "false"):
                raise _Bad(f"{name} is a boolean: use {name}, !{name} or {name} == true/false")
            want = (rhs == "true") == (op == "==")
            return (lambda ctx: ctx.value(name)) if want else (lambda ctx: np.logical_not(ctx.value(name)))
        if rkind != "num":
            raise _Bad(f"{name} is a number: compare it with a number, not {rhs!r}")
        x = float(rhs)
        ops: dict[str, Callable[[Any, float], Any]] = {
            "==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
            ">": np.greater, ">=": np.greater_equal,
        }  # fmt: skip
        f = ops[op]
        return lambda ctx: f(ctx.value(name), x)

    # values: sum := prod (('+'|'-') prod)* ; prod := unary (('*'|'/') unary)* ; unary := '-' unary | '(' sum ')' | atom
    def value(self) -> tuple[Value, float | None]:
        """The value and, when it is a constant, that constant."""
        v, const = self._sum()
        self.done()
        return v, const

    def _sum(self) -> tuple[Value, float | None]:
        left, lc = self._prod()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            right, rc = self._prod()
            left, lc = _arith(op, left, lc, right, rc)
        return left, lc

    def _prod(self) -> tuple[Value, float | None]:
        left, lc = self._vunary()
        while self.peek() in ("*", "/"):
            op = self.take()[1]
            right, rc = self._vunary()
            left, lc = _arith(op, left, lc, right, rc)
        return left, lc

    def _vunary(self) -> tuple[Value, float | None]:
        if self.peek() == "-":
            self.take()
            inner, c = self._vunary()
            return (lambda ctx: -inner(ctx)), (None if c is None else -c)
        if self.peek() == "(":
            self.take()
            inner_v = self._sum()
            self.expect(")")
            return inner_v
        kind, tok = self.take()
        if kind == "num":
            x = float(tok)
            return (lambda ctx: x), x
        if kind != "name":
            raise _Bad(f"expected a number, found {tok!r}")
        if self._known(tok) != "number":
            raise _Bad(f"{tok} is not a number: a value may use numbers and numeric encoded values only")
        return (lambda ctx: ctx.value(tok)), None


def _arith(op: str, a: Value, ac: float | None, b: Value, bc: float | None) -> tuple[Value, float | None]:
    if op == "/" and bc == 0:  # `max_speed / 0` as much as `1 / 0`
        raise _Bad("division by zero")
    if ac is not None and bc is not None:
        c = {"+": ac + bc, "-": ac - bc, "*": ac * bc, "/": ac / bc if bc else 0.0}[op]
        return (lambda ctx: c), c
    if op == "+":
        return (lambda ctx: a(ctx) + b(ctx)), None
    if op == "-":
        return (lambda ctx: a(ctx) - b(ctx)), None
    if op == "*":
        return (lambda ctx: a(ctx) * b(ctx)), None

    def div(ctx: ArcContext) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.divide(a(ctx), b(ctx))

    return div, None


# -- statements ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Statement:
    """One rule: its keyword, condition (None for `else`), operation, value or nested block, and where it is in the
    model (`speed[2]`, `priority[0].do[1]`) for messages."""

    keyword: str
    condition: Cond | None
    op: str
    value: Value | None
    const: float | None
    block: tuple[Statement, ...]
    where: str
    text: str


@dataclass(frozen=True)
class CustomModel:
    """A parsed model: its speed and priority rules, distance influence (s per km, >= 0), areas (id -> GeoJSON
    Feature, parsed by the engine against the graph), the encoded values it reads, and its key (sha256 of its
    canonical JSON, 16 hex digits)."""

    speed: tuple[Statement, ...]
    priority: tuple[Statement, ...]
    distance_influence: float
    areas: Mapping[str, Any]
    names: frozenset[str]
    key: str
    source: Mapping[str, Any] = field(repr=False)

    def check_graph(self, arrays: Mapping[str, np.ndarray]) -> None:
        """`InvalidValue` naming the first encoded value the model reads that the graph does not store."""
        for name in sorted(self.names):
            if not has_value(arrays, name):
                raise InvalidValue(
                    f"custom_model: this graph does not store {name!r} (built before it existed): "
                    "re-run `starroute preprocess` to add it"
                )

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        """Pickled as its source, parsed again when unpickled (its compiled rules are closures): a request with a
        model goes to a search process so (`app.api.search_processes`)."""
        return parse_model, (dict(self.source),)


def _fail(where: str, text: str, why: str) -> InvalidValue:
    shown = f" ({text!r})" if text else ""
    return InvalidValue(f"custom_model.{where}{shown}: {why}")


def _as_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return v
    raise _Bad(f"expected a string or number, not {type(v).__name__}")


def _statements(
    items: Any, where: str, block: str, areas: frozenset[str], names: set[str], count: list[int]
) -> tuple[Statement, ...]:
    if not isinstance(items, list):
        raise InvalidValue(f"custom_model.{where}: a list of statements, not {type(items).__name__}")
    out: list[Statement] = []
    for i, item in enumerate(items):
        here = f"{where}[{i}]"
        count[0] += 1
        if count[0] > MAX_STATEMENTS:
            raise InvalidValue(f"custom_model: more than {MAX_STATEMENTS} statements")
        if not isinstance(item, Mapping):
            raise _fail(here, "", f"a statement is an object, not {type(item).__name__}")
        unknown = sorted(set(item) - set(KEYWORDS) - set(OPERATIONS))
        if unknown:
            raise _fail(here, "", f"unknown key {unknown[0]!r} (a statement has one of if/else_if/else and one of "
                        "multiply_by/limit_to/do)")  # fmt: skip
        keys = [k for k in KEYWORDS if k in item]
        ops = [k for k in OPERATIONS if k in item]
        if len(keys) != 1:
            raise _fail(here, "", "a statement has exactly one of if, else_if, else")
        if len(ops) != 1:
            raise _fail(here, "", "a statement has exactly one operation: multiply_by, limit_to or do")
        keyword, op = keys[0], ops[0]
        prev = out[-1].keyword if out else None
        if keyword != "if" and prev not in ("if", "else_if"):
            raise _fail(here, "", f"'{keyword}' must follow an 'if' or 'else_if' (every group starts with 'if')")
        text = ""
        cond: Cond | None = None
        try:
            raw = item[keyword]
            if keyword == "else":
                if raw not in (None, "", True):
                    raise _Bad(f"'else' takes no condition, got {raw!r}")
            else:
                text = _as_text(raw).strip()
                if not text:
                    raise _Bad('empty condition (use "true")')
                cond = _Parser(text, areas, names).condition()
        except _Bad as exc:
            raise _fail(here, text, f"bad condition: {exc}") from None
        value: Value | None = None
        const: float | None = None
        nested: tuple[Statement, ...] = ()
        vtext = ""
        if op == "do":
            nested = _statements(item[op], f"{here}.do", block, areas, names, count)
        else:
            try:
                vtext = _as_text(item[op]).strip()
                if not vtext:
                    raise _Bad("empty value")
                value, const = _Parser(vtext, areas, names).value()
            except _Bad as exc:
                raise _fail(here, vtext, f"bad {op} value: {exc}") from None
            if const is not None:
                _check_value(block, op, const, here, vtext)
        out.append(Statement(keyword, cond, op, value, const, nested, here, text or vtext))
    return tuple(out)


def _check_value(block: str, op: str, x: float, where: str, text: str) -> None:
    """GraphHopper's ranges: no negative factor or limit; a priority factor at most 1 (priority is never raised above
    the profile's, as GraphHopper's landmark rule for query models)."""
    if not math.isfinite(x):
        raise _fail(where, text, f"{op} must be finite")
    if x < 0:
        raise _fail(where, text, f"{op} cannot be negative ({x:g})")
    if block == "priority" and op == "multiply_by" and x > 1:
        raise _fail(where, text, f"a priority factor cannot be larger than 1 ({x:g})")


def parse_model(obj: Any) -> CustomModel:
    """Parse and check a custom model (GraphHopper's JSON as a dict, or its text). `InvalidValue` names the rule and
    the reason: bad syntax, an unknown encoded value (listing the known ones), a constant the value does not have, a
    negative or (priority) larger-than-1 factor, a negative limit, an `in_<id>` without that area.

    >>> parse_model({"priority": [{"if": "road_class == MOTORWAY", "multiply_by": "0"}]}).names
    frozenset({'road_class'})
    """
    if isinstance(obj, (str, bytes)):
        try:
            obj = json.loads(obj)
        except ValueError as exc:
            raise InvalidValue(f"custom_model is not valid JSON: {exc}") from None
    if not isinstance(obj, Mapping):
        raise InvalidValue(f"custom_model must be a JSON object, not {type(obj).__name__}")
    unknown = sorted(set(obj) - set(TOP_LEVEL))
    if unknown:
        extra = " (turn penalties are not supported)" if unknown[0] == "turn_penalty" else ""
        raise InvalidValue(f"custom_model: unknown key {unknown[0]!r}{extra}; known: {', '.join(TOP_LEVEL)}")
    areas = _areas(obj.get("areas"))
    names: set[str] = set()
    count = [0]
    speed = _statements(obj.get("speed", []), "speed", "speed", frozenset(areas), names, count)
    priority = _statements(obj.get("priority", []), "priority", "priority", frozenset(areas), names, count)
    di = obj.get("distance_influence")
    if di is None:
        di = 0.0
    if isinstance(di, bool) or not isinstance(di, (int, float)) or not math.isfinite(di):
        raise InvalidValue(f"custom_model.distance_influence: a number of seconds per km, not {di!r}")
    if di < 0:
        raise InvalidValue(f"custom_model.distance_influence cannot be negative ({di:g})")
    canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    key = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    return CustomModel(speed, priority, float(di), areas, frozenset(names), key, obj)


def _areas(obj: Any) -> dict[str, Any]:
    """The model's areas: id -> its GeoJSON Feature (geometry checked by the engine when it meets the graph)."""
    if obj is None:
        return {}
    if not isinstance(obj, Mapping) or obj.get("type") != "FeatureCollection":
        raise InvalidValue("custom_model.areas must be a GeoJSON FeatureCollection")
    features = obj.get("features")
    if not isinstance(features, list):
        raise InvalidValue("custom_model.areas: the FeatureCollection has no list of features")
    out: dict[str, Any] = {}
    for i, f in enumerate(features):
        if not isinstance(f, Mapping) or f.get("type") != "Feature":
            raise InvalidValue(f"custom_model.areas.features[{i}]: a GeoJSON Feature")
        fid = f.get("id")
        if not isinstance(fid, (str, int)) or isinstance(fid, bool) or not re.fullmatch(r"[A-Za-z0-9_]+", str(fid)):
            raise InvalidValue(f"custom_model.areas.features[{i}]: an id of letters, digits and _ (used as in_<id>)")
        if str(fid) in out:
            raise InvalidValue(f"custom_model.areas: two features with id {fid!r}")
        geom = f.get("geometry")
        if not isinstance(geom, Mapping) or geom.get("type") not in ("Polygon", "MultiPolygon"):
            raise InvalidValue(f"custom_model.areas.features[{i}] ({fid}): the geometry must be a Polygon")
        out[str(fid)] = f
    return out


# -- evaluation ------------------------------------------------------------------------------------------------------


def _apply(stmts: tuple[Statement, ...], v: np.ndarray, active: np.ndarray, ctx: ArcContext, block: str) -> None:
    """Run a list of statements over the arcs in `active` (GraphHopper's order: groups in turn, in a group the first
    statement whose condition holds), updating `v` in place."""
    remaining = active
    for s in stmts:
        if s.keyword == "if":
            remaining = active
        if s.condition is None:
            hit = remaining
        else:
            cond = np.broadcast_to(np.asarray(s.condition(ctx), dtype=bool), (ctx.n,))
            hit = remaining & cond
            remaining = remaining & ~cond
        if s.keyword == "else":
            remaining = np.zeros(ctx.n, dtype=bool)
        if not hit.any():
            continue
        if s.op == "do":
            _apply(s.block, v, hit, ctx, block)
            continue
        assert s.value is not None
        x = np.broadcast_to(np.asarray(s.value(ctx), dtype=np.float64), (ctx.n,))[hit]
        if s.const is None:  # a value over encoded values: its range is known only now
            bad = ~np.isfinite(x) & ~(np.isposinf(x) & (s.op == "limit_to")) | (x < 0)
            if block == "priority" and s.op == "multiply_by":
                bad |= x > 1
            if bad.any():
                y = float(x[np.flatnonzero(bad)[0]])
                if y < 0:
                    why = "negative"
                elif y > 1 and block == "priority" and s.op == "multiply_by":
                    why = "larger than 1 for a priority factor"
                else:  # a speed factor may exceed 1, not be infinite
                    why = "not finite"
                raise _fail(s.where, s.text, f"the {s.op} value is {y:g} on some road: {why}")
        if s.op == "multiply_by":
            v[hit] = v[hit] * x
        else:
            v[hit] = np.minimum(v[hit], x)


def evaluate(model: CustomModel, ctx: ArcContext, base_speed_kmh: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(speed km/h, priority) per road arc: the speed rules applied to each arc's own speed `base_speed_kmh`, the
    priority rules to 1 (so priority stays in 0..1). `MissingValue` becomes `InvalidValue` ("re-run preprocess")."""
    everything = np.ones(ctx.n, dtype=bool)
    speed = np.asarray(base_speed_kmh, dtype=np.float64).copy()
    priority = np.ones(ctx.n, dtype=np.float64)
    try:
        _apply(model.speed, speed, everything, ctx, "speed")
        _apply(model.priority, priority, everything, ctx, "priority")
    except MissingValue as exc:
        raise InvalidValue(f"custom_model: {exc.args[0]}") from None
    return speed, priority


def evaluate_slowly(model: CustomModel, ctx: ArcContext, base_speed_kmh: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same as `evaluate`, one arc at a time in plain Python: the tests' oracle."""
    n = ctx.n
    cols = {name: ctx.value(name) for name in model.names}
    cols.update({f"in_{a}": ctx.value(f"in_{a}") for a in model.areas})

    class One(ArcContext):
        def __init__(self, i: int) -> None:
            self.i = i
            self.n = 1

        def value(self, name: str) -> np.ndarray:
            return cols[name][self.i : self.i + 1]

    def run(stmts: tuple[Statement, ...], v: float, one: One, block: str) -> float:
        matched = False
        for s in stmts:
            if s.keyword == "if":
                matched = False
            if matched:
                continue
            ok = True if s.condition is None else bool(np.asarray(s.condition(one)).reshape(-1)[0])
            if not ok:
                continue
            matched = True
            if s.op == "do":
                v = run(s.block, v, one, block)
                continue
            assert s.value is not None
            x = float(np.asarray(s.value(one), dtype=np.float64).reshape(-1)[0])
            v = v * x if s.op == "multiply_by" else min(v, x)
        return v

    speed = np.empty(n)
    priority = np.empty(n)
    for i in range(n):
        one = One(i)
        speed[i] = run(model.speed, float(base_speed_kmh[i]), one, "speed")
        priority[i] = run(model.priority, 1.0, one, "priority")
    return speed, priority


AVOID_AREA = "starroute_avoid_"  # the id prefix of the areas to avoid that `closing_areas` adds


def closer(model: CustomModel) -> str:
    """Who closes roads in `model`, for a message: the custom model, the areas to avoid (`closing_areas`), or both."""
    avoid = [f for f in model.areas if str(f).startswith(AVOID_AREA)]
    if not avoid:
        return "the custom model"
    only_avoid = len(avoid) == len(model.areas) and not model.speed and len(model.priority) == 1
    return (
        "the areas to avoid"
        if only_avoid and model.distance_influence == 0
        else "the custom model and the areas to avoid"
    )


def closing_areas(model: CustomModel | None, polygons: Any) -> CustomModel:
    """`model` (None: the profile's own weighting) with every road that meets one of `polygons` closed: avoid areas
    as a custom model (a priority 0 on `in_<area>`), so tables and isochrones avoid them by the same mechanism.
    `polygons`: `app.engine.features.areas.Areas.polygons` (rings of (lon, lat) rows, exterior first)."""
    source = dict(model.source) if model is not None else {}
    features = list((source.get("areas") or {}).get("features") or [])
    ids = []
    for i, rings in enumerate(polygons):
        fid = f"{AVOID_AREA}{i}"
        ids.append(fid)
        geometry = {"type": "Polygon", "coordinates": [np.asarray(r, dtype=np.float64).tolist() for r in rings]}
        features.append({"type": "Feature", "id": fid, "properties": {}, "geometry": geometry})
    if not ids:
        return model if model is not None else parse_model({})
    rule = {"if": " || ".join(f"in_{f}" for f in ids), "multiply_by": "0"}
    source["priority"] = [*(source.get("priority") or []), rule]
    source["areas"] = {"type": "FeatureCollection", "features": features}
    return parse_model(source)
