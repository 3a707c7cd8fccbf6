"""azero.train — see DESIGN.md."""
