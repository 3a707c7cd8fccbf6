"""KaTrain's GUI with azero as its analysis engine, under a virtual display, saved as a screenshot.

    xvfb-run -s "-screen 0 1300x1000x24" .venv/bin/python experiments/katrain_screenshot.py \
        GAME.sgf MOVE OUT.png [CHECKPOINT]

KaTrain (the `clients` extra) runs with a private home folder whose config points its engine at
`azero analyze --game go9x9` (KaTrain's "custom command" backend), opens GAME.sgf, analyses every
move, goes to move MOVE and saves the window to OUT.png once that position's analysis is complete.
Needs an X server: Debian's xvfb and libgl1-mesa-dri give a virtual one with software OpenGL.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def configure(home: Path, checkpoint: str) -> None:
    """KaTrain's package config with azero as the engine and a 9x9 Chinese-rules game."""
    import importlib.resources

    package = json.loads((importlib.resources.files("katrain") / "config.json").read_text())
    command = "exec " + " ".join(shlex.quote(x) for x in [
        str(ROOT / ".venv/bin/azero"), "analyze", "--game", "go9x9", "--checkpoint", checkpoint])
    package["engine"].update(backend="custom", altcommand=command, max_visits=200, fast_visits=50, max_time=20.0)
    package["game"].update(size="9", komi=7.5, rules="chinese")
    package["general"]["debug_level"] = 0
    # a width that is a multiple of 8: Kivy's screenshot of other widths comes out sheared
    package["ui_state"].update(restoresize=True, size=[1200, 880], left=0, top=0)
    (home / ".katrain").mkdir(parents=True, exist_ok=True)
    (home / ".katrain" / "config.json").write_text(json.dumps(package, indent=1))


def main() -> None:
    sgf, move, out = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]).resolve()
    checkpoint = sys.argv[4] if len(sys.argv) > 4 else str(ROOT / "docs/go-ablate/all-cheap/go9x9.safetensors")
    home = Path(tempfile.mkdtemp(prefix="katrain-home-"))
    os.environ.update(HOME=str(home), KIVY_HOME=str(home / ".kivy"), KIVY_NO_ARGS="1")
    configure(home, checkpoint)
    sys.argv = [sys.argv[0], str(Path(sgf).resolve())]  # KaTrain opens the SGF named on its command line

    from kivy.clock import Clock
    from kivy.core.window import Window

    from katrain.__main__ import KaTrainApp

    app = KaTrainApp()
    state = {"moved": False, "waited": 0}

    def tick(_dt):
        gui = app.gui
        if gui is None or gui.game is None:
            return
        if not state["moved"]:
            gui("redo", move)
            state["moved"] = True
            return
        node = gui.game.current_node
        state["waited"] += 1
        if node.analysis_complete and gui.engine.is_idle() or state["waited"] > 600:
            gui.update_state(redraw_board=True)
            Clock.schedule_once(lambda _dt: (Window.screenshot(name=str(out)), app.stop()), 2.0)
            return False

    Clock.schedule_interval(tick, 0.5)
    app.run()


if __name__ == "__main__":
    main()
