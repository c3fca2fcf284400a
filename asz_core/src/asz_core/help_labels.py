"""How ``asz … -h`` names what an option takes, for every command (core's and plugins', all
typer): a flag takes nothing and shows no label (typer 0.29 writes ``<bool>``); a choice lists its
names with spaces between them, so a narrow help wraps between names, never inside one (typer
writes ``<talk|stream|…|project>``, which folds mid-name: ``p``/``roject``); other values by what
they are (``TEXT``, ``N``, ``PATH``), as click writes them. Applied once, when the full CLI is
built (``asz_core.cli``); the lean path prints no help."""

from __future__ import annotations

from typing import Any

_PLAIN = {"str": "TEXT", "int": "N", "float": "NUMBER", "path": "PATH", "Path": "PATH"}


def label(param: Any, ctx: Any) -> str | None:
    """What ``param`` takes, as ``-h`` shows it (None: nothing, a flag)."""
    if getattr(param, "metavar", None) is not None:
        return param.metavar
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return None
    desc = getattr(param, "type_descriptor", None)
    if desc is not None and desc.is_choice:
        return " | ".join(str(getattr(c, "value", c)) for c in desc.choices or ())
    text = str(param.display_type(ctx) or "")
    inner = text.strip("<>")
    many = inner.startswith("list[") and inner.endswith("]")
    if many:
        inner = inner[5:-1]
    shown = _PLAIN.get(inner, inner.upper() if inner.isidentifier() else inner)
    return shown + ("..." if getattr(param, "nargs", 1) != 1 else "")


def install() -> None:
    """Every typer option and argument labelled by :func:`label`."""
    from typer import core

    for cls in (core.TyperOption, core.TyperArgument):
        if getattr(cls, "_asz_labels", False):
            continue
        cls.display_type_rich = label  # type: ignore[method-assign]
        cls._asz_labels = True  # type: ignore[attr-defined]
