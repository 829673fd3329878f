"""Plotly figure builders, one module per page (pure functions of arrays, no Streamlit);
:mod:`.style` holds what they share.  Import the concrete module:
``from snacks_core.app.figures.convergence import convergence_figure``."""
