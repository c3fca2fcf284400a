"""The kit: where it is found, its digests, its slots, and that its examples hold to its schemas."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import jsonschema
import pytest

from asz_core.judge.kit import Kit, render

ROOT = Path(__file__).resolve().parents[2]


def test_the_kit_ships_in_the_package_and_the_top_level_links_to_it() -> None:
    kit = Kit.load()
    assert kit.path == (ROOT / "asz_core/src/asz_core/kit").resolve()
    assert (ROOT / "kit/prompts").resolve() == kit.path / "prompts"
    assert (ROOT / "kit/schemas").resolve() == kit.path / "schemas"
    names = [f.name for f in kit.files()]
    for want in ("shared.md", "labels.md", "targets.md", "targets.json", "subtasks.md", "subtasks.json", "efficiency.md",
                 "efficiency.json", "achievement.md", "achievement.json"):
        assert want in names


def test_digests() -> None:
    kit = Kit.load()
    ref = kit.ref("targets")
    assert ref.digest == kit.digest and len(ref.digest) == 64
    assert ref.prompt_template == hashlib.sha256(kit.template("targets").encode()).hexdigest()
    assert ref.schema == hashlib.sha256((kit.path / "schemas/targets.json").read_bytes()).hexdigest()
    assert kit.template("targets").startswith((kit.path / "prompts/shared.md").read_text().rstrip())


def test_another_kit_by_asz_kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    shutil.copytree(Kit.load().path, tmp_path / "kit")
    (tmp_path / "kit/prompts/targets.md").write_text("changed {{budget}}")
    monkeypatch.setenv("ASZ_KIT", str(tmp_path / "kit"))
    other = Kit.load()
    assert other.digest != Kit(Path(ROOT / "asz_core/src/asz_core/kit").resolve()).digest
    monkeypatch.setenv("ASZ_KIT", str(tmp_path / "nothing"))
    with pytest.raises(Exception, match="no kit at"):
        Kit.load()


def test_every_slot_is_filled_once() -> None:
    slots = set(re.findall(r"\{\{(\w+)\}\}", Kit.load().template("targets")))
    assert slots == {"budget", "card", "call_note", "own", "context", "catalogue", "goals"}
    assert set(re.findall(r"\{\{(\w+)\}\}", Kit.load().template("achievement"))) == {"budget", "card", "call_note", "own",
                                                                                   "catalogue"}
    assert render("a {{x}} b", {"x": "{{x}}"}) == "a {{x}} b"
    with pytest.raises(KeyError):
        render("{{y}}", {})


@pytest.mark.parametrize("stage", ["targets", "achievement", "subtasks", "efficiency"])
def test_the_prompt_example_holds_to_the_schema(stage: str) -> None:
    kit = Kit.load()
    text = kit.template(stage)
    example = json.loads(text.split("## An example", 1)[1].split("```json\n", 1)[1].split("```", 1)[0])
    jsonschema.Draft202012Validator.check_schema(kit.schema(stage))
    jsonschema.validate(example, kit.schema(stage))


def test_the_sub_task_and_efficiency_prompts_share_one_definition_of_the_labels() -> None:
    kit = Kit.load()
    labels = (kit.path / "prompts/labels.md").read_text().rstrip()
    for stage in ("subtasks", "efficiency"):
        t = kit.template(stage)
        assert labels in t and "{{include" not in t
    for stage in ("subtasks", "efficiency"):  # every label a schema allows is defined, and no other
        allowed = set(kit.schema(stage)["$defs"]["label"]["enum"])
        assert allowed == set(re.findall(r"^- `(\w+)`", labels, re.M)) | {"not_reviewed"}


def test_an_include_the_kit_lacks_is_an_error(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(Kit.load().path, tmp_path / "kit")
    (tmp_path / "kit/prompts/labels.md").unlink()
    with pytest.raises(Exception, match="includes prompts/labels.md"):
        Kit.load(tmp_path / "kit").template("efficiency")


def test_the_bundled_script_answers_hold_to_the_schema() -> None:
    from asz_evaluators.scripted import load_script

    kit = Kit.load()
    for e in load_script(ROOT / "examples/scripted-5e1f0c2a.yaml"):
        jsonschema.validate(e["answer"], kit.schema(e["stage"]))
