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
import tempfile
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

from attrs import frozen

from .errors import AszError
from .records import Usage

PRICES_DIR = Path(__file__).resolve().parent / "prices"
"""Where asz ships its snapshot of the genai-prices data."""
SNAPSHOT_PREFIX = "genai-prices-"

PARTS = ("input", "cache_read", "cache_write_5m", "cache_write_1h", "output", "other")
"""How a call's money is split. ``cache_write_5m`` holds cache writes priced at the provider's
plain cache-write rate (the 5-minute one); ``other`` what genai-prices prices beyond tokens."""

_PART_OF_UNIT = {
    "input_tokens": "input", "input_text_tokens": "input",
    "cache_read_tokens": "cache_read", "cache_text_read_tokens": "cache_read",
    "cache_write_tokens": "cache_write_5m", "cache_write_5m_tokens": "cache_write_5m",
    "cache_text_write_tokens": "cache_write_5m", "cache_text_write_5m_tokens": "cache_write_5m",
    "cache_write_1h_tokens": "cache_write_1h", "cache_text_write_1h_tokens": "cache_write_1h",
    "output_tokens": "output", "output_text_tokens": "output",
}


class PriceFileError(AszError):
    """A price file that cannot be read as genai-prices data."""


@frozen
class PriceFile:
    """The price file a ledger names: where it is and its SHA-256."""

    path: str
    sha256: str
    source: str | None
    """What the data is (``genai-prices 0.2.3``), when the file says."""
    taken: str | None
    """The date the snapshot was taken, when the file says."""
    shipped: bool
    """True for the snapshot asz ships."""

    @property
    def name(self) -> str:
        return Path(self.path).name


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


# --- price files -------------------------------------------------------------------------------

def shipped_snapshots(folder: Path = PRICES_DIR) -> list[Path]:
    return sorted(folder.glob(f"{SNAPSHOT_PREFIX}*.json"))


def default_price_file() -> Path:
    found = shipped_snapshots()
    if not found:
        raise PriceFileError(f"no price snapshot in {PRICES_DIR}; run `asz prices update`")
    return found[-1]


def _import_genai_prices() -> None:
    """The modules of genai-prices a ledger uses (its types, units and arithmetic), without the
    package's own import-time work: its ``__init__`` also loads its HTTP client for auto-updates,
    which asz never uses (the data is the price file's). The package stands in ``sys.modules`` as
    an empty module until something asks it for a name (``asz prices update``: its version and
    data); then its ``__init__`` runs, over the modules already imported."""
    import importlib
    import importlib.util
    import sys

    if "genai_prices" in sys.modules:
        return
    spec = importlib.util.find_spec("genai_prices")
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return  # not installed: the import that follows says so
    import types

    package = types.ModuleType("genai_prices")
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__, package.__file__ = spec, spec.origin

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
    try:
        import genai_prices.data_snapshot  # noqa: F401
        import genai_prices.decompose  # noqa: F401
        import genai_prices.types  # noqa: F401
        import genai_prices.units  # noqa: F401
        import genai_prices.validation  # noqa: F401
    except BaseException:
        del sys.modules["genai_prices"]
        raise


class Prices:
    """A loaded price file. Providers are validated only when a call needs them, so a ledger
    pays for the few providers its calls ran on, not the whole catalogue."""

    def __init__(self, raw_providers: list[dict[str, Any]], file: PriceFile) -> None:
        _import_genai_prices()
        from genai_prices.types import _providers_from_raw

        self.file = file
        self._raw = raw_providers
        try:
            # Headers only (no models): enough to find a call's provider by its model name.
            self._headers = _providers_from_raw([{k: v for k, v in p.items() if k != "models"} for p in raw_providers])
        except Exception as exc:  # pydantic's ValidationError and friends: the file is not usable
            raise PriceFileError(f"{file.path} is not genai-prices data: {_first_line(exc)}") from exc
        self._full: dict[str, Any] = {}
        self._model_cache: dict[str, tuple[Any, Any] | None] = {}
        self._plans: dict[tuple[int, int], _Plan] = {}
        self._by_day: dict[tuple[int, Any], _Plan] = {}
        self._tod: dict[int, bool] = {}

    # -- loading ---------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> Prices:
        """The price file at ``path``, or the newest snapshot asz ships."""
        p = Path(path) if path is not None else default_price_file()
        shipped = p.resolve().parent == PRICES_DIR
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise PriceFileError(f"cannot read price file {p}: {exc.strerror or exc}") from exc
        raw = _parse(data, p)
        if isinstance(raw, dict):
            providers, source, taken = raw.get("providers"), raw.get("source"), raw.get("taken")
        else:
            providers, source, taken = raw, None, None
        if not isinstance(providers, list) or not all(isinstance(x, dict) for x in providers):
            raise PriceFileError(f"{p}: expected a list of providers (genai-prices data.json shape) or an object with `providers`")
        file = PriceFile(str(p), hashlib.sha256(data).hexdigest(), _str(source), _str(taken), shipped)
        return cls(providers, file)

    # -- lookups ---------------------------------------------------------------------------
    def find(self, model: str) -> tuple[Any, Any] | None:
        """(provider, model info) for a model name as a runtime recorded it, or None."""
        if model in self._model_cache:
            return self._model_cache[model]
        from genai_prices.data_snapshot import DataSnapshot

        found = None
        try:
            provider = DataSnapshot(self._headers, from_auto_update=False).find_provider(model.lower(), None, None)
        except LookupError:
            provider = None
        if provider is not None:
            full = self._hydrate([provider.id, *(provider.fallback_model_providers or ())])
            snap = DataSnapshot(full, from_auto_update=False)
            try:
                found = snap.find_provider_model(model, None, provider.id, None)
            except LookupError:
                found = None
        self._model_cache[model] = found
        return found

    def _hydrate(self, ids: Iterable[str]) -> list[Any]:
        from genai_prices.types import _providers_from_raw

        want = set(ids)
        for i, raw in enumerate(self._raw):
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
                plan = self._plans[key] = _Plan(model_price)
            self._by_day[(id(info), day)] = plan
        return plan

    # -- pricing ---------------------------------------------------------------------------
    def price(self, model: str | None, usage: Usage | None, ts: str | None) -> CallPrice:
        """What one call cost, priced on its own at the price in force at ``ts``.

        Unknown counts are left out of the money (it is then the price of what is known, and
        ``complete`` is False); they are never taken for 0 in the tier either: a call whose input
        side is partly unknown is priced at the tier its known part reaches.
        """
        if not model:
            return CallPrice(None, unpriced="no model")
        found = self.find(model)
        if found is None:
            return CallPrice(None, unpriced=f"no price for {model}")
        provider, info = found
        when = _when(ts)
        if when is None:
            if not _time_free(info):
                return CallPrice(None, unpriced="no time (its price changes over time)", model_id=info.id, provider_id=provider.id)
            when = _EPOCH
        u = usage or _NO_USAGE
        try:
            parts = self._plan(info, when).parts(u)
        except ValueError as exc:  # the counts do not decompose (genai-prices' own check)
            return CallPrice(None, unpriced=f"usage genai-prices cannot price ({_first_line(exc)})", model_id=info.id, provider_id=provider.id)
        complete = u.input is not None and u.output is not None and u.cache_read is not None and u.cache_write is not None
        money = sum(parts.values(), Decimal(0))
        return CallPrice(money, tuple((k, parts[k]) for k in PARTS if k in parts), complete, None, info.id, provider.id)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
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

    def __init__(self, model_price: Any) -> None:
        from genai_prices.decompose import is_descendant_or_self
        from genai_prices.types import _collect_resolved_model_prices
        from genai_prices.units import _get_registry
        from genai_prices.validation import validate_priced_units

        registry = _get_registry()
        resolved = _collect_resolved_model_prices(model_price, registry)
        validate_priced_units(tuple(u for u, _ in resolved), registry)
        token_units = [u for u, _ in resolved if u.usage_key != "requests"]
        # compute_leaf_values' order: most specific unit first.
        order = sorted(token_units, key=lambda u: (-len(u.dimensions), u.usage_key))
        self.leaves = tuple(
            (u.usage_key, tuple(d.usage_key for d in order if d is not u and is_descendant_or_self(u, d)))
            for u in order
        )
        self.units = tuple((u.usage_key, price, u.per, _PART_OF_UNIT.get(u.usage_key, "other")) for u, price in resolved)

    def parts(self, u: Usage) -> dict[str, Decimal]:
        counts = _counts(u)
        leaf: dict[str, int] = {}
        for key, below in self.leaves:
            v = counts.get(key, 0)
            for d in below:
                v -= leaf[d]
            if v < 0:
                raise ValueError(f"more-specific counts exceed {key} ({counts.get(key, 0)})")
            leaf[key] = v
        total_in = counts["input_tokens"]
        parts: dict[str, Decimal] = {}
        for key, price, per, part in self.units:
            n = 1 if key == "requests" else leaf[key]
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


def _counts(u: Usage) -> dict[str, int]:
    """A call's counts as genai-prices' usage keys. Its input is the whole input side; a count
    asz does not know is left out (0 to genai-prices, and the call's money is then incomplete)."""
    cr, cw = u.cache_read, u.cache_write
    c = {"input_tokens": (u.input or 0) + (cr or 0) + (cw or 0)}
    if cr is not None:
        c["cache_read_tokens"] = cr
    if cw is not None:
        c["cache_write_tokens"] = cw
        # The 5-minute / 1-hour split, when the runtime recorded one that adds up.
        w5, w1 = u.cache_write_5m, u.cache_write_1h
        if w1 is not None and (w5 is None or w5 + w1 == cw):
            c["cache_write_1h_tokens"] = w1
            if w5 is not None:
                c["cache_write_5m_tokens"] = w5
    if u.output is not None:
        c["output_tokens"] = u.output
    return c


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


@frozen
class UpdateResult:
    file: PriceFile
    changed: bool
    removed: tuple[str, ...]


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
    with os.fdopen(fd, "wb") as f:
        f.write(body)
    os.replace(tmp, target)
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
    return PriceFile(str(p), hashlib.sha256(p.read_bytes()).hexdigest(), _str(doc.get("source")), _str(doc.get("taken")),
                     p.parent.resolve() == PRICES_DIR)
