"""Prices: what one model call cost, from a price file of genai-prices data.

The data and the arithmetic are genai-prices' own (pydantic/genai-prices): asz keeps no price
table. A price file is a snapshot of that data as JSON (or YAML) in the shape of genai-prices'
``data.json``: a list of providers, or an object with a ``providers`` list and a few words on where
the data came from. asz ships a dated snapshot in ``asz_core/prices/`` and ``asz prices update``
writes a new one from the installed package; ``--prices FILE`` uses a person's own.

Every call is priced on its own, never an aggregate: the price in force at the call's time
(prices change over time) and the tier for that call's size (a call past a context threshold
pays more for every token of it). Money is :class:`~decimal.Decimal` throughout.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

from attrs import frozen

from .model_ids import spellings
from .price_file import (  # noqa: F401 - here too, where callers took them
    PRICES_DIR, SNAPSHOT_PREFIX, PriceFile, PriceFileError, UpdateResult, default_price_file, shipped_snapshots)
from .records import PARTS, Usage  # noqa: F401 - PARTS here too, where callers took it

_PART_OF_UNIT = {
    "input_tokens": "input", "input_text_tokens": "input",
    "cache_read_tokens": "cache_read", "cache_text_read_tokens": "cache_read",
    "cache_write_tokens": "cache_write_5m", "cache_write_5m_tokens": "cache_write_5m",
    "cache_text_write_tokens": "cache_write_5m", "cache_text_write_5m_tokens": "cache_write_5m",
    "cache_write_1h_tokens": "cache_write_1h", "cache_text_write_1h_tokens": "cache_write_1h",
    "output_tokens": "output", "output_text_tokens": "output",
}


@frozen
class CallPrice:
    """What one call cost, or why it has no price."""

    money: Decimal | None
    """The price of its known counts; None when the call is unpriced."""
    parts: tuple[tuple[str, Decimal], ...] = ()
    """``money`` split by :data:`PARTS` (only the parts it has)."""
    complete: bool = False
    """True when every count was known, so ``money`` is the whole price of the call."""
    unpriced: str | None = None
    """Why there is no price: ``no model``, ``no price for <model>``, ``no time``, ..."""
    model_id: str | None = None
    """The genai-prices model the call's model matched."""
    provider_id: str | None = None
    floor_money: Decimal = Decimal(0)
    """A call whose output is unknown: the price of its output's streaming floor (the largest
    value its fragments showed), apart from ``money``. ``money + floor_money`` is a lower bound of
    what the call cost that counts what is known to have been output (ccusage prices the same
    floors as the output)."""

    @property
    def at_least(self) -> Decimal | None:
        """A lower bound of what the call cost: ``money`` and its output floor priced (equal to
        ``money`` when ``complete``); None when it is unpriced."""
        return None if self.money is None else self.money + self.floor_money


# --- price files -------------------------------------------------------------------------------

def _import_genai_prices() -> None:
    """The modules of genai-prices a ledger uses (its types, units and arithmetic), without the
    package's own import-time work: its ``__init__`` also loads its HTTP client for auto-updates,
    which asz never uses (the data is the price file's). The package stands in ``sys.modules`` as
    an empty module until something asks it for a name (``asz prices update``: its version and
    data); then its ``__init__`` runs, over the modules already imported."""
    import sys

    if "genai_prices.types" in sys.modules:
        return
    if "genai_prices" not in sys.modules:
        _stub_genai_prices()
    try:
        import genai_prices.data_snapshot  # noqa: F401
        import genai_prices.types  # noqa: F401
    except BaseException:
        if "__asz_stub__" in getattr(sys.modules.get("genai_prices"), "__dict__", {}):
            del sys.modules["genai_prices"]
        raise
    _import_genai_arithmetic()


def _import_genai_arithmetic() -> None:
    """genai-prices' units, their decomposition and validation: plain Python, no pydantic (what
    a price plan is made with, :class:`_Plan`)."""
    import sys

    if "genai_prices" not in sys.modules:
        _stub_genai_prices()
    import genai_prices.decompose  # noqa: F401
    import genai_prices.units  # noqa: F401
    import genai_prices.validation  # noqa: F401


def _stub_genai_prices() -> None:
    import importlib
    import importlib.util
    import sys

    spec = importlib.util.find_spec("genai_prices")
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return  # not installed: the import that follows says so
    import types

    package = types.ModuleType("genai_prices")
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__, package.__file__ = spec, spec.origin
    package.__asz_stub__ = True  # type: ignore[attr-defined]

    def whole(name: str) -> Any:
        if name.startswith("__") and name != "__version__":
            raise AttributeError(name)
        sub = f"genai_prices.{name}"
        if sub in sys.modules or importlib.util.find_spec(sub) is not None:
            return importlib.import_module(sub)  # a module of it (``from . import types``)
        del package.__getattr__  # type: ignore[attr-defined]
        spec.loader.exec_module(package)  # type: ignore[union-attr]
        return getattr(package, name)

    package.__getattr__ = whole  # type: ignore[attr-defined]
    sys.modules["genai_prices"] = package


class Prices:
    """A loaded price file. Providers are validated only when a call needs them, so a ledger
    pays for the few providers its calls ran on, not the whole catalogue.

    The snapshot asz ships is read lean (:class:`_LeanBook`): the model found, the price in force
    chosen and the prices made Decimal from the raw data as genai-prices does it, without its
    pydantic types (their import is most of a ledger's start); genai-prices' own units, their
    decomposition and validation make the plan. Whatever the lean reading does not take (a
    time-of-day price, a clause or value of another shape) genai-prices reads itself. A test
    checks both readings agree on every model of the snapshot and every call of the corpus."""

    def __init__(self, raw_providers: list[dict[str, Any]] | Callable[[], list[dict[str, Any]]], file: PriceFile,
                 *, lean: list[dict[str, Any]] | _Lines | None = None) -> None:
        """``raw_providers``: the providers as genai-prices data (Decimal numbers), or a function
        reading them when genai-prices is needed; ``lean``: the same data read fast, for the lean
        reading (without it, genai-prices reads everything, and a file that is not its data is
        said at once)."""
        self.file = file
        self._raw_of = raw_providers
        self._lean = _LeanBook(lean) if lean is not None else None
        self._headers: list[Any] | None = None
        self._full: dict[str, Any] = {}
        self._model_cache: dict[str, tuple[Any, Any] | None] = {}
        self._plans: dict[tuple[int, int], _Plan] = {}
        self._by_day: dict[tuple[int, Any], _Plan] = {}
        self._tod: dict[int, bool] = {}
        if self._lean is None:
            self._genai()

    def _genai(self) -> list[Any]:
        """genai-prices' providers, headers only (no models): enough to find a call's provider by
        its model name."""
        if self._headers is None:
            _import_genai_prices()
            from genai_prices.types import _providers_from_raw

            if callable(self._raw_of):
                self._raw_of = self._raw_of()
            try:
                self._headers = _providers_from_raw([{k: v for k, v in p.items() if k != "models"} for p in self._raw_of])
            except Exception as exc:  # pydantic's ValidationError and friends: the file is not usable
                raise PriceFileError(f"{self.file.path} is not genai-prices data: {_first_line(exc)}") from exc
        return self._headers

    # -- loading ---------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> Prices:
        """The price file at ``path``, or the newest snapshot asz ships."""
        p = Path(path) if path is not None else default_price_file()
        shipped = p.resolve().parent == PRICES_DIR
        try:
            from .regular import read_regular

            data = read_regular(p)  # a FIFO given as --prices is refused, not waited on
        except OSError as exc:
            raise PriceFileError(f"cannot read price file {p}: {exc.strerror or exc}") from exc
        fast = None
        if shipped and p.suffix.lower() == ".json":
            import orjson

            fast = _snapshot_lines(data, p)  # the lines of `asz prices update`: each read when looked at
            if fast is None:
                try:
                    fast = orjson.loads(data)  # floats, if any, the lean reading leaves to genai-prices
                except orjson.JSONDecodeError:
                    fast = None
        raw = fast if fast is not None else _parse(data, p)
        if isinstance(raw, dict):
            providers, source, taken = raw.get("providers"), raw.get("source"), raw.get("taken")
        else:
            providers, source, taken = raw, None, None
        if not (type(providers) is _Lines or (isinstance(providers, list) and all(isinstance(x, dict) for x in providers))):
            raise PriceFileError(f"{p}: expected a list of providers (genai-prices data.json shape) or an object with `providers`")
        file = PriceFile(str(p), hashlib.sha256(data).hexdigest(), _str(source), _str(taken), shipped)
        if fast is None:
            return cls(providers, file)

        def exact() -> list[dict[str, Any]]:
            whole = _parse(data, p)
            return whole.get("providers") if isinstance(whole, dict) else whole  # type: ignore[no-any-return]

        return cls(exact, file, lean=providers)

    # -- lookups ---------------------------------------------------------------------------
    def find(self, model: str) -> tuple[Any, Any] | None:
        """(provider, model info) for a model name as a runtime recorded it, or None: the name
        as written, else the first of its other spellings (:func:`model_ids.spellings`, the
        ways providers spell a model) that has a price. Both readings, lean and genai-prices'
        own, go through here."""
        if model in self._model_cache:
            return self._model_cache[model]
        found = None
        for ref in spellings(model):
            found = self._find_as_written(ref)
            if found is not None:
                break
        self._model_cache[model] = found
        return found

    def _find_as_written(self, model: str) -> tuple[Any, Any] | None:
        if self._lean is not None:
            try:
                return self._lean.find(model)
            except (_Unsure, re.error):
                pass  # genai-prices reads it (and says what is wrong with it)
        headers = self._genai()
        from genai_prices.data_snapshot import DataSnapshot

        found = None
        try:
            provider = DataSnapshot(headers, from_auto_update=False).find_provider(model.lower(), None, None)
        except LookupError:
            provider = None
        if provider is not None:
            full = self._hydrate([provider.id, *(provider.fallback_model_providers or ())])
            snap = DataSnapshot(full, from_auto_update=False)
            try:
                found = snap.find_provider_model(model, None, provider.id, None)
            except LookupError:
                found = None
        return found

    def _hydrate(self, ids: Iterable[str]) -> list[Any]:
        from genai_prices.types import _providers_from_raw

        want = set(ids)
        assert not callable(self._raw_of) and self._headers is not None
        for i, raw in enumerate(self._raw_of):
            pid = self._headers[i].id
            if pid in want and pid not in self._full:
                try:
                    self._full[pid] = _providers_from_raw([raw])[0]
                except Exception as exc:
                    raise PriceFileError(f"{self.file.path}: provider {pid!r} is not valid genai-prices data: {_first_line(exc)}") from exc
        return [self._full.get(h.id, h) for h in self._headers]

    def _plan(self, info: Any, when: dt.datetime) -> _Plan:
        """How to price a call of a model at a time: genai-prices' own choice of the price in
        force, validated as genai-prices validates it, made into a plan once."""
        # The price in force changes by day (start dates), or by time of day (off-peak prices).
        tod = self._tod.get(id(info))
        if tod is None:
            tod = self._tod[id(info)] = _by_time_of_day(info)
        day = when if tod else when.astimezone(dt.UTC).date()
        plan = self._by_day.get((id(info), day))
        if plan is None:
            model_price = info.get_prices(when)
            key = (id(info), id(model_price))  # stable: the model info holds its prices
            plan = self._plans.get(key)
            if plan is None:
                plan = self._plans[key] = _Plan(_genai_resolved(model_price))
            self._by_day[(id(info), day)] = plan
        return plan

    # -- pricing ---------------------------------------------------------------------------
    def price(self, model: str | None, usage: Usage | None, ts: str | None, floor: int | None = None) -> CallPrice:
        """What one call cost, priced on its own at the price in force at ``ts``.

        Unknown counts are left out of the money (it is then the price of what is known, and
        ``complete`` is False); they are never taken for 0 in the tier either: a call whose input
        side is partly unknown is priced at the tier its known part reaches. ``floor``, for a
        call whose output is unknown, is its output's streaming floor: priced apart as
        ``floor_money``, never in ``money``.
        """
        if not model:
            return CallPrice(None, unpriced="no model")
        found = self.find(model)
        if found is None:
            return CallPrice(None, unpriced=f"no price for {model}")
        provider, info = found
        lean = type(info) is _LeanModel
        when = _when(ts)
        if when is None:
            if not (info.time_free if lean else _time_free(info)):
                return CallPrice(None, unpriced="no time (its price changes over time)", model_id=info.id, provider_id=provider.id)
            when = _EPOCH
        u = usage or _NO_USAGE
        floored = u.output is None and floor is not None and floor > 0
        try:
            plan = info.plan_at(when) if lean else self._plan(info, when)
            # The floor priced in the same pass: output is a leaf of its own and no tier reads it,
            # so the other parts are those of the call without it, and its part is the floor's.
            parts = plan.parts(Usage(u.input, floor, u.cache_read, u.cache_write, u.cache_write_5m, u.cache_write_1h)
                               if floored else u)
        except ValueError as exc:  # the counts do not decompose (genai-prices' own check)
            return CallPrice(None, unpriced=f"usage genai-prices cannot price ({_first_line(exc)})", model_id=info.id, provider_id=provider.id)
        floor_money = parts.pop("output", _ZERO) if floored else _ZERO
        complete = u.input is not None and u.output is not None and u.cache_read is not None and u.cache_write is not None
        money = sum(parts.values(), _ZERO)
        return CallPrice(money, tuple([(k, parts[k]) for k in PARTS if k in parts]), complete, None, info.id, provider.id,
                         floor_money)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_ZERO = Decimal(0)
_NO_USAGE = Usage()


class _Plan:
    """One price set of genai-prices, ready to price calls.

    ``ModelPrice.calc_price`` does, for each call: resolve the unit of each price key, check the
    priced units cover each other, decompose the usage into leaf counts (each unit's count less
    its priced descendants': cache reads and writes out of the input, 1-hour writes out of the
    writes), then price each leaf, picking a tier by the call's whole input side. The first two
    depend only on the price set, so they are done here once, with genai-prices' own functions;
    the rest is its arithmetic, per call. A test checks the result against ``calc_price`` on
    every call of the corpus.
    """

    def __init__(self, resolved: tuple[tuple[Any, Any], ...]) -> None:
        """``resolved``: (unit, price) of each price key, in the price set's order (genai-prices'
        ``_collect_resolved_model_prices``); a price is a Decimal, or tiers (``base``, ``tiers``
        of ``start`` and ``price``)."""
        from genai_prices.decompose import is_descendant_or_self
        from genai_prices.units import _get_registry
        from genai_prices.validation import validate_priced_units

        validate_priced_units(tuple(u for u, _ in resolved), _get_registry())
        token_units = [u for u, _ in resolved if u.usage_key != "requests"]
        # compute_leaf_values' order: most specific unit first.
        order = sorted(token_units, key=lambda u: (-len(u.dimensions), u.usage_key))
        self.leaves = tuple(
            (u.usage_key, tuple(d.usage_key for d in order if d is not u and is_descendant_or_self(u, d)))
            for u in order
        )
        self.units = tuple((u.usage_key, price, u.per, _PART_OF_UNIT.get(u.usage_key, "other")) for u, price in resolved)
        # The same, by place, for :meth:`parts`: each leaf's count as an index into _COUNT_KEYS
        # (its last place: a key no call counts) and its descendants' leaves by index; each
        # unit's leaf by index (None: ``requests``, one a call).
        at = {k: i for i, (k, _) in enumerate(self.leaves)}
        self._leaves = tuple((_COUNT_AT.get(k, len(_COUNT_KEYS)), tuple(at[d] for d in below), k) for k, below in self.leaves)
        self._units = tuple((None if key == "requests" else at[key], price, per, part) for key, price, per, part in self.units)

    def parts(self, u: Usage) -> dict[str, Decimal]:
        """The call's money by part (:data:`PARTS`), in the order of the price set's units: each
        priced unit's leaf count (its count less its priced descendants') at its price (the tier
        the call's whole input side reaches), per unit of ``per``. This runs for every call."""
        counts = _count_list(u)
        leaf: list[int] = []
        for src, below, key in self._leaves:
            v = counts[src]
            for d in below:
                v -= leaf[d]
            if v < 0:
                raise ValueError(f"more-specific counts exceed {key} ({counts[src]})")
            leaf.append(v)
        total_in = counts[0]
        parts: dict[str, Decimal] = {}
        for i, price, per, part in self._units:
            n = 1 if i is None else leaf[i]
            if not n:
                continue
            if type(price) is not Decimal:
                # genai-prices' calc_unit_price: the highest tier the call's whole input side
                # passes sets the price of every unit of it.
                tiered, price = price, price.base
                for tier in reversed(tiered.tiers):
                    if total_in > tier.start:
                        price = tier.price
                        break
            v = price * n / per
            parts[part] = parts[part] + v if part in parts else v
        return parts


def _genai_resolved(model_price: Any) -> tuple[tuple[Any, Any], ...]:
    from genai_prices.types import _collect_resolved_model_prices
    from genai_prices.units import _get_registry

    return _collect_resolved_model_prices(model_price, _get_registry())


# --- the lean reading ----------------------------------------------------------------------------

class _Unsure(Exception):
    """Something the lean reading does not take as genai-prices would: genai-prices reads it."""


class _LeanProvider(NamedTuple):
    id: str


class _Tier(NamedTuple):
    start: int
    price: Decimal


class _Tiers(NamedTuple):
    base: Decimal
    tiers: tuple[_Tier, ...]


_DECIMAL_TEXT = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_COMPACT_DATE = re.compile(r"(-)(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)")


_PROVIDERS_OPEN = b', "providers": ['


def _snapshot_lines(data: bytes, p: Path) -> dict[str, Any] | None:
    """A snapshot as `asz prices update` writes it (:func:`_dump`: a head line, one provider a
    line, ``]}``) as its head with ``providers`` the lines, each read when first looked at: a
    ledger of Claude Code calls reads Anthropic's line, not the other 800 KB. None when the file
    is not laid out so (it is then read whole)."""
    import orjson

    lines = data.split(b"\n")
    if len(lines) < 4 or lines[-1] != b"" or lines[-2] != b"]}" or not lines[0].endswith(_PROVIDERS_OPEN):
        return None
    body = lines[1:-2]
    if not all(x.endswith(b",") for x in body[:-1]) or body[-1].endswith(b","):
        return None
    try:
        head = orjson.loads(lines[0][: -len(_PROVIDERS_OPEN)] + b"}")
    except orjson.JSONDecodeError:
        return None
    if type(head) is not dict:
        return None
    head["providers"] = _Lines([x[:-1] for x in body[:-1]] + [body[-1]], p)
    return head


class _Lines:
    """The providers of a snapshot, one JSON object a line, each read (orjson) when first looked
    at; only iterated, in order, as :class:`_LeanBook` reads them. A line that is no JSON object
    is said when it is reached, by its file and line (a price file must be genai-prices data)."""

    __slots__ = ("_lines", "_read", "_path")

    def __init__(self, lines: list[bytes], path: Path) -> None:
        self._lines = lines
        self._read: list[dict[str, Any] | None] = [None] * len(lines)
        self._path = path

    def __iter__(self) -> Iterator[dict[str, Any]]:
        read = self._read
        for i in range(len(read)):
            got = read[i]
            if got is None:
                got = read[i] = self._one(i)
            yield got

    def _one(self, i: int) -> dict[str, Any]:
        import orjson

        try:
            got = orjson.loads(self._lines[i])
        except orjson.JSONDecodeError as exc:
            raise PriceFileError(f"{self._path}, line {i + 2}: not JSON ({exc})") from exc
        if type(got) is not dict:
            raise PriceFileError(f"{self._path}, line {i + 2}: expected a provider (a JSON object), "
                                 "as genai-prices data.json holds them")
        return got


class _LeanBook:
    """The raw data of a price file, read as genai-prices reads it for a model name: the provider
    whose ``model_match`` takes the name (``DataSnapshot.find_provider``), that provider by its id
    (``find_provider_by_id``), its model whose ``match`` takes the name, else one of its fallback
    providers' (``Provider.find_model``, the compact-date form of the name tried second)."""

    def __init__(self, providers: list[dict[str, Any]] | _Lines) -> None:
        self.providers = providers

    def find(self, model: str) -> tuple[_LeanProvider, _LeanModel] | None:
        ref = model.lower()
        first = next((p for p in self.providers if p.get("model_match") is not None and _lean_match(p["model_match"], ref)), None)
        if first is None:
            return None
        pid = first.get("id")
        if type(pid) is not str or pid.lower().strip() == "litellm":
            raise _Unsure  # genai-prices' litellm rules
        norm = pid.lower().strip()
        provider = next((p for p in self.providers if p.get("id") == norm), None) or next(
            (p for p in self.providers if p.get("provider_match") is not None and _lean_match(p["provider_match"], norm)), None)
        if provider is None:
            return None
        if provider is not first:
            raise _Unsure  # found by id another than by its name: genai-prices' own hydration decides
        info = self._model(provider, ref, True)
        if info is None:
            again = _compact_dated(ref)
            if again != ref:
                info = self._model(provider, again, True)
        if info is None:
            return None
        return _LeanProvider(pid), _LeanModel(info)  # provider is first: its id is pid, a str

    def _model(self, provider: dict[str, Any], ref: str, fall_back: bool) -> dict[str, Any] | None:
        models = provider.get("models") or []
        if type(models) is not list:
            raise _Unsure
        for m in models:
            if type(m) is not dict:
                raise _Unsure
            if _lean_match(m.get("match"), ref.lower()):
                return m
        fallbacks = provider.get("fallback_model_providers")
        if fall_back and fallbacks:
            if type(fallbacks) is not list:
                raise _Unsure
            for fid in fallbacks:
                other = next((p for p in self.providers if p.get("id") == fid), None)
                if other is not None and (m := self._model(other, ref, False)) is not None:  # one step of fallback
                    return m
        return None


class _LeanModel:
    """A model of the raw data with its price sets made plans: ``ModelInfo.get_prices`` (the last
    price whose start date the call's UTC day reached, else the first) without a request context."""

    __slots__ = ("id", "sets", "time_free")

    def __init__(self, raw: dict[str, Any]) -> None:
        if type(raw.get("id")) is not str:
            raise _Unsure
        self.id: str = raw["id"]
        prices = raw.get("prices", [])
        sets: list[tuple[dt.date | None, _Plan]] = []
        if type(prices) is dict:
            sets.append((None, _lean_plan(prices)))
        elif type(prices) is list and prices:
            for c in prices:
                if type(c) is not dict or not c.keys() <= {"constraint", "prices"} or type(c.get("prices")) is not dict:
                    raise _Unsure
                sets.append((_start_date(c.get("constraint")), _lean_plan(c["prices"])))
        else:
            raise _Unsure
        self.sets = tuple(sets)
        self.time_free = type(prices) is dict or all(start is None for start, _ in sets)

    def plan_at(self, when: dt.datetime) -> _Plan:
        day = when.astimezone(dt.UTC).date()
        for start, plan in reversed(self.sets):
            if start is None or day >= start:
                return plan
        return self.sets[0][1]


def _start_date(c: Any) -> dt.date | None:
    if c is None:
        return None
    if type(c) is dict and c.keys() == {"start_date"} and type(c["start_date"]) is str and _DATE_TEXT.fullmatch(c["start_date"]):
        try:
            return dt.date.fromisoformat(c["start_date"])
        except ValueError:
            pass
    raise _Unsure  # a time of day (off-peak prices), or another shape


def _lean_plan(prices: dict[str, Any]) -> _Plan:
    """A price set as genai-prices resolves it (``ModelPrice`` of its keys in order, None left
    out), made a plan."""
    _import_genai_arithmetic()
    from genai_prices.units import _get_registry

    registry = _get_registry()
    resolved = []
    for key, value in prices.items():
        if value is None:
            continue
        if key.startswith("_") or key not in registry._all_price_keys:
            raise _Unsure  # genai-prices warns of it
        resolved.append((registry.unit_for_price_key(key), _lean_price(value)))
    try:
        return _Plan(tuple(resolved))
    except ValueError as exc:
        raise _Unsure from exc  # genai-prices says it, when the call is priced


def _lean_price(v: Any) -> Decimal | _Tiers:
    if type(v) is dict and v.keys() == {"base", "tiers"} and type(v["tiers"]) is list:
        tiers = []
        for t in v["tiers"]:
            if type(t) is not dict or t.keys() != {"start", "price"} or type(t["start"]) is not int or t["start"] < 0:
                raise _Unsure
            tiers.append(_Tier(t["start"], _lean_decimal(t["price"])))
        tiers.sort(key=lambda t: t.start)  # TieredPrices.__post_init__
        return _Tiers(_lean_decimal(v["base"]), tuple(tiers))
    return _lean_decimal(v)


def _lean_decimal(v: Any) -> Decimal:
    # Written as a plain decimal number, the Decimal pydantic makes of it is Decimal(text).
    if type(v) is str and _DECIMAL_TEXT.fullmatch(v):
        return Decimal(v)
    if type(v) is int and v >= 0:
        return Decimal(v)
    raise _Unsure


def _lean_match(clause: Any, text: str) -> bool:
    """genai-prices' match clauses (``ClauseStartsWith`` ... ``ClauseAnd``) on the raw data."""
    if type(clause) is not dict or len(clause) != 1:
        raise _Unsure
    ((kind, v),) = clause.items()
    if kind in ("or", "and"):
        if type(v) is not list:
            raise _Unsure
        return (any if kind == "or" else all)(_lean_match(c, text) for c in v)
    if type(v) is not str:
        raise _Unsure
    if kind == "starts_with":
        return text.lower().startswith(v.lower())
    if kind == "ends_with":
        return text.lower().endswith(v.lower())
    if kind == "contains":
        return v.lower() in text.lower()
    if kind == "equals":
        return text.lower() == v.lower()
    if kind == "regex":
        return bool(re.search(v, text))
    raise _Unsure


def _compact_dated(ref: str) -> str:
    """genai-prices' ``_normalize_compact_dated_ref``: ``-20251211`` as ``-2025-12-11``."""
    def one(m: re.Match[str]) -> str:
        year, month, day = (int(m.group(i)) for i in range(2, 5))
        try:
            dt.date(year, month, day)
        except ValueError:
            return m.group(0)
        return f"{m.group(1)}{year:04d}-{month:02d}-{day:02d}"

    return _COMPACT_DATE.sub(one, ref)


_COUNT_KEYS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens", "cache_write_5m_tokens",
               "output_tokens")
_COUNT_AT = {k: i for i, k in enumerate(_COUNT_KEYS)}


def _count_list(u: Usage) -> list[int]:
    """A call's counts as genai-prices' usage keys, by place (:data:`_COUNT_KEYS`, then 0 for any
    other key). Its input is the whole input side; a count asz does not know is 0 to genai-prices
    (the call's money is then incomplete); the 5-minute / 1-hour split only when the runtime
    recorded one that adds up (or only its 1-hour part)."""
    cr, cw, w5, w1 = u.cache_read, u.cache_write, u.cache_write_5m, u.cache_write_1h
    if cw is None or w1 is None or not (w5 is None or w5 + w1 == cw):
        w1 = w5 = None  # no split that adds up
    out = u.output
    return [(u.input or 0) + (cr or 0) + (cw or 0), cr or 0, cw or 0, w1 or 0, w5 or 0, out or 0, 0]


def _when(ts: str | None) -> dt.datetime | None:
    if not ts:
        return None
    try:
        t = dt.datetime.fromisoformat(ts)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


def _by_time_of_day(info: Any) -> bool:
    from genai_prices.types import TimeOfDateConstraint

    conds = [c.constraint for c in info.prices] if isinstance(info.prices, list) else []
    conds += [v.constraint for v in info.price_variants or ()]
    return any(isinstance(c, TimeOfDateConstraint) for c in conds)


def _time_free(info: Any) -> bool:
    """True when a model's price never depends on the time of the call."""
    return not isinstance(info.prices, list) or all(c.constraint is None for c in info.prices)


def _parse(data: bytes, p: Path) -> Any:
    try:
        if p.suffix.lower() in (".yaml", ".yml"):
            from ruamel.yaml import YAML

            return _decimals(YAML(typ="safe").load(data))
        return json.loads(data, parse_float=Decimal)
    except Exception as exc:
        raise PriceFileError(f"{p} is neither JSON nor YAML genai-prices data: {_first_line(exc)}") from exc


def _decimals(v: Any) -> Any:
    """YAML floats to exact decimals (as written, never through binary floating point)."""
    if isinstance(v, float):
        return Decimal(repr(v))
    if isinstance(v, list):
        return [_decimals(x) for x in v]
    if isinstance(v, dict):
        return {k: _decimals(x) for k, x in v.items()}
    return v


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _first_line(exc: BaseException) -> str:
    s = str(exc).strip()
    return s.splitlines()[0] if s else type(exc).__name__


# --- the snapshot ------------------------------------------------------------------------------

def package_data() -> tuple[str, list[dict[str, Any]]]:
    """The installed genai-prices package's data, in the shape of its ``data.json``."""
    import genai_prices
    from genai_prices.data import providers

    return f"genai-prices {genai_prices.__version__}", [_raw(p) for p in providers]


def _raw(o: Any) -> Any:
    from genai_prices.types import ModelPrice

    if isinstance(o, ModelPrice):
        return {k: _raw(v) for k, v in o.__dict__.items() if not k.startswith("_") and v is not None}
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        out = {}
        for f in dataclasses.fields(o):
            v = getattr(o, f.name)
            if f.name.startswith("_") or v is None:
                continue
            out[f.name.rstrip("_")] = _raw(v)  # ClauseOr.or_ is `or` in the data
        return out
    if isinstance(o, (list, tuple)):
        return [_raw(x) for x in o]
    if isinstance(o, dict):
        return {k: _raw(v) for k, v in o.items()}
    if isinstance(o, Decimal):
        return str(o)  # exact: never a binary float
    if isinstance(o, (dt.date, dt.time)):
        return o.isoformat()
    return o


def update_snapshot(folder: Path | None = None, *, today: dt.date | None = None) -> UpdateResult:
    """Write the installed genai-prices data as ``genai-prices-<date>.json`` in ``folder`` (by
    default the snapshot asz ships). Nothing is written when the data is what the newest snapshot
    there already holds; older snapshots are removed (a ledger names its file's SHA-256, and a
    person keeps any file they want to price with again)."""
    folder = folder or PRICES_DIR
    try:
        return _update(folder, today)
    except OSError as exc:
        raise PriceFileError(f"cannot write a price snapshot in {folder} ({exc.strerror or exc}); "
                             "give a folder that can be written with --to") from exc


def _update(folder: Path, today: dt.date | None) -> UpdateResult:
    import tempfile  # only `asz prices update` writes: a ledger does not import it

    folder.mkdir(parents=True, exist_ok=True)
    source, providers = package_data()
    existing = shipped_snapshots(folder)
    if existing:
        try:
            old = json.loads(existing[-1].read_bytes(), parse_float=Decimal)
        except (OSError, ValueError):
            old = None
        if isinstance(old, dict) and old.get("providers") == providers and old.get("source") == source:
            p = existing[-1]
            return UpdateResult(_file_of(p, old), False, ())
    day = (today or dt.datetime.now(dt.UTC).date()).isoformat()
    doc = {"source": source, "taken": day,
           "note": "genai-prices data (pydantic/genai-prices, MIT) as asz prices it; written by `asz prices update`",
           "providers": providers}
    target = folder / f"{SNAPSHOT_PREFIX}{day}.json"
    body = _dump(doc)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".prices-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        os.replace(tmp, target)
    except OSError as exc:  # a full disk: the file named, no temp file left
        os.unlink(tmp)
        raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from None
    removed = tuple(p.name for p in existing if p != target)
    for p in existing:
        if p != target:
            p.unlink()
    return UpdateResult(_file_of(target, doc), True, removed)


def _dump(doc: dict[str, Any]) -> bytes:
    # One provider a line: small enough to ship, and a refresh diffs by provider.
    head = {k: v for k, v in doc.items() if k != "providers"}
    lines = [json.dumps(head, ensure_ascii=False)[:-1] + ', "providers": [']
    provs = doc["providers"]
    for i, p in enumerate(provs):
        lines.append(json.dumps(p, ensure_ascii=False, separators=(",", ":")) + ("," if i < len(provs) - 1 else ""))
    lines.append("]}")
    return ("\n".join(lines) + "\n").encode()


def _file_of(p: Path, doc: dict[str, Any]) -> PriceFile:
    from .regular import read_regular

    return PriceFile(str(p), hashlib.sha256(read_regular(p)).hexdigest(), _str(doc.get("source")), _str(doc.get("taken")),
                     p.parent.resolve() == PRICES_DIR)
