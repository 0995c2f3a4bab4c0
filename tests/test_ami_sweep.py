"""A vendor model that crashes or hangs in a sweep: that point records a one-line error
naming the model and the call, and the sweep goes on."""

import pytest

from phy import sweep as sw
from tests.ami_models.build import model_folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return model_folder(tmp_path_factory.mktemp("hostile"), ("segv", "hang"))


def _sweep(folder, name: str, values: str, extra: str = ""):
    p = folder / f"{name}.toml"
    p.write_text('[channel]\nkind = "library"\nname = "chip_to_module"\n[link]\nlane_rate_gbps = 106.25\n'
                 f'[rx_ami]\nlibrary = "{name}.so"\nami = "{name}.ami"\n{extra}'
                 f'[grid]\n"rx_ami.parameters" = {values}\n')
    return sw.load_spec(p)


@pytest.mark.parametrize("executor", ["inline", "processes"])
def test_a_crashing_model_fails_its_point_and_the_sweep_goes_on(folder, executor):
    spec = _sweep(folder, "segv", '[{ where = "init" }, { where = "none" }]')
    r = sw.run_sweep(spec, folder / f"segv_{executor}.jsonl", executor=executor, workers=1, progress=False)
    assert (r.ok, r.failed) == (1, 1)
    recs = list(sw.read_records(folder / f"segv_{executor}.jsonl").values())
    bad = next(x for x in recs if x["status"] == "error")
    assert bad["params"]["rx_ami.parameters"] == {"where": "init"}
    assert "AMI model 'segv' (segv.so): AMI_Init crashed" in bad["error"] and "SIGSEGV" in bad["error"]
    assert "\n" not in bad["error"]
    good = next(x for x in recs if x["status"] == "ok")
    assert good["params"]["rx_ami.parameters"] == {"where": "none"}


def test_a_hanging_model_is_killed_at_its_time_limit(folder):
    spec = _sweep(folder, "hang", '[{ mode = "init" }, { mode = "none" }]', "timeout_s = 2\n")
    r = sw.run_sweep(spec, folder / "hang.jsonl", executor="inline", progress=False)
    assert (r.ok, r.failed) == (1, 1)
    bad = next(x for x in sw.read_records(folder / "hang.jsonl").values() if x["status"] == "error")
    assert "AMI model 'hang' (hang.so): AMI_Init gave no answer within 2 s" in bad["error"]
