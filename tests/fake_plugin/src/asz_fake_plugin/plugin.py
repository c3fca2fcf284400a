"""Entry point module (group ``asz``, name ``fake``): advertises one runtime adapter.

Two environment switches let the tests drive the error paths with one installed distribution:

* ``ASZ_FAKE_PLUGIN_BROKEN=1``: importing this module fails (a plugin that cannot load).
* ``ASZ_FAKE_PLUGIN_NAME=claudecode``: the adapter claims another name, e.g. one that
  asz-adapters-claudecode already claims (two plugins, one name).
"""

import os

from asz_core import hookimpl

if os.environ.get("ASZ_FAKE_PLUGIN_BROKEN"):
    raise ImportError("asz_fake_plugin was told to fail (ASZ_FAKE_PLUGIN_BROKEN)")


@hookimpl
def asz_runtime_adapters():
    from .adapter import FakeAdapter

    name = os.environ.get("ASZ_FAKE_PLUGIN_NAME")
    if name:
        return [type("RenamedFakeAdapter", (FakeAdapter,), {"name": name, "__module__": __name__})]
    return [FakeAdapter]
