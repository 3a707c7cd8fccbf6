"""The LLM code by layer: the game adapter in azero.search.llm runs on numpy and the search core
alone (no torch, no transformers), and the models in azero.train.llm import nothing above train."""

import subprocess
import sys

import pytest


def _loaded_after(imports: str) -> set[str]:
    code = f"import sys\n{imports}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_search_llm_imports_no_model_library():
    loaded = _loaded_after("import azero.search.llm.decode, azero.search.llm.game, azero.search.llm.protocol, "
                           "azero.search.llm.searchers, azero.search.llm.tasks")
    assert "azero.search.llm.searchers" in loaded
    heavy = {m for m in loaded if m.split(".")[0] in ("torch", "transformers", "safetensors", "matplotlib")}
    assert not heavy, sorted(heavy)[:5]
    above = {m for m in loaded if m.startswith(("azero.train", "azero.selfplay", "azero.llm", "azero.eval"))}
    assert not above, sorted(above)


@pytest.mark.parametrize("module", ["engine", "hf", "model", "train"])
def test_train_llm_imports_only_downward(module):
    loaded = _loaded_after(f"import azero.train.llm.{module}")
    above = {m for m in loaded if m.startswith(("azero.selfplay", "azero.llm", "azero.eval", "azero.runs"))}
    assert not above, sorted(above)
