"""Entry point module (group ``asz``). Keep it light: asz imports it whenever it lists plugins,
so the adapter module (and anything heavy it needs) is imported inside the hook."""

from asz_core import hookimpl


@hookimpl
def asz_runtime_adapters():
    from .adapter import MyRuntimeAdapter

    return [MyRuntimeAdapter]
