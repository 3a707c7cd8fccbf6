"""azero.selfplay — see DESIGN.md."""
