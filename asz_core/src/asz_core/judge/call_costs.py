"""What each model call of a run's judged window cost and whose it is, saved when the run closes
(``call-costs.json``; docs/close.md, "What each call cost").

The close prices calls from the store at the run's head with its price file. A later reader of
the run (``asz compare``) must not need the store: the record can be gone, moved to another
machine, or collected past the head. So the close saves, beside close.json, every call of the
priced work (the judged talks with the sub-agents they started, and in a whole-conversation run
the loose and unattributed work) with its tokens, its money (exact, and a lower bound where an
output is unknown) and the targets it is charged to, with the exact shares of
:func:`~.target_cost.cost_per_target`, the one cut the close uses. A function of run.json, the
targets stage's file, the store at the head and the price file: computed again, the same bytes.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from .judgment import VERSION, CallsFile, CallShare, PriceRef, WindowCall

FILE = "call-costs.json"


def of_view(view: Any) -> CallsFile:
    """The call-costs file of a run as its close reads it (:class:`~.close.View`)."""
    from .target_cost import cost_per_target

    run, w, led = view.run, view.window, view.ledger
    got = view.read["targets"]
    rec = got.record if got.usable else None
    costing = cost_per_target(w, led, rec.targets if rec else (), rec.inputs if rec else ())
    why = {x.call: x.why for x in costing.record.shared}
    judged = set(w.judged)
    rows = []
    for c in led.calls:
        if c.step not in costing.of_call and c.root not in judged:
            continue  # a talk before the window: context, not priced
        to = costing.of_call.get(c.step, ())
        u, p = c.usage, c.price
        rows.append(WindowCall(
            step=c.step, call=c.call, stream=c.stream, talk=c.talk, root=c.root, model=c.model,
            input=u.input, output=u.output, cache_read=u.cache_read, cache_write=u.cache_write,
            output_floor=c.output_floor, money=p.money, complete=p.complete,
            at_least=p.at_least, unpriced=p.unpriced,
            to=tuple(CallShare(t, Fraction(1, len(to))) for t in to), shared=why.get(c.step)))
    pr = run["prices"]
    return CallsFile(version=VERSION, run=run["run"], conversation=run["conversation"], head=run["head"],
                     head_digest=run["head_digest"], window=run["window"],
                     prices=PriceRef(name=pr["name"], path=pr.get("path"), sha256=pr["sha256"]),
                     targets_stage=got.said, judged=tuple(w.judged), calls=tuple(rows))


def write(path: Path, store: Any = None, view: Any = None) -> Path:
    """call-costs.json of the closed run at ``path`` written, once: by the runner as it closes, and
    for a run closed before asz saved it (``asz judge -show RUN --costs``), from the store at the
    run's head with its price file (:func:`~.close.load_view` refuses another head or price file)."""
    import os

    from ..convert import dumps
    from ..errors import AszError
    from ..store import Store
    from .close import load_view
    from .context import write_once

    out = Path(path) / FILE
    if os.path.lexists(out):
        raise AszError(f"{out} is there already (a run's files are written once)")
    if view is None:
        own = store is None
        st = store or Store.open()
        try:
            view = load_view(Path(path), st)
        finally:
            if own:
                st.close()
    write_once(out, dumps(of_view(view), indent=True) + b"\n")
    return out


__all__ = ["FILE", "of_view", "write"]
