"""Streamlit helpers of the explorer: session state, cached calls, shared widgets, texts and
the Snacks paper's tables.

Only the explorer's code lives here (Streamlit's, and :mod:`.explorer`'s computations that
only the explorer needs, which import no Streamlit): models and their measurements are in
:mod:`snacks_core.model.evaluation`, spectra in :mod:`snacks_core.kernels.spectra`, model files in
:mod:`snacks_core.persistence`, exported code in :mod:`snacks_core.app.snippets`.
"""
