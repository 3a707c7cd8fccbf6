"""azero.search — see DESIGN.md."""
