"""Pricing imports only the parts of genai-prices it uses (issue 16: genai-prices loaded without
its package's import-time work), and the whole package is still there for whatever asks for it."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
from asz_core.pricing import Prices
from asz_core.records import Usage
p = Prices.load()
money = p.price("claude-sonnet-4-5-20250929", Usage(100, 200, 300, 400), "2025-11-01T10:00:00Z").money
print(money, "genai_prices.update_prices" in sys.modules)
import genai_prices
from genai_prices.data import providers
print(genai_prices.__version__ != "", genai_prices.types is sys.modules["genai_prices.types"], len(providers) > 10,
      "genai_prices.update_prices" in sys.modules)
"""


def test_a_price_needs_no_more_of_genai_prices_than_its_arithmetic() -> None:
    r = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    priced, whole = r.stdout.splitlines()
    assert priced == "0.00489 False"  # priced, and the auto-update machinery never imported
    assert whole == "True True True True"  # asked for, the package is whole, over the same modules
