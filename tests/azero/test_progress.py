"""Progress lines: the closing line of a run is printed once."""

from azero.runs.progress import RunLogger


def test_the_forced_closing_line_does_not_repeat_the_last_one(tmp_path):
    lines = []
    log = RunLogger(tmp_path / "logs", None, every_s=1e9, total_steps=10, echo=lines.append)
    metrics = {"games": 3, "positions": 40}
    log.tick(5, {"games": "games 3"}, metrics)              # the first line always prints
    log.tick(5, {"games": "games 3"}, metrics, force=True)  # nothing new: skipped
    assert len(lines) == 1
    log.tick(6, {"games": "games 4"}, {"games": 4, "positions": 52}, force=True)
    assert len(lines) == 2 and "step 6/10" in lines[-1]
    log.close()
    assert (tmp_path / "logs" / "progress.log").read_text().count("step") == 2
