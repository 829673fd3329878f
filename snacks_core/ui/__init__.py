"""Streamlit helpers of the explorer: session state, cached calls, shared widgets, texts and
the Snacks paper's tables.

Only Streamlit code lives here: the computations the pages show are in
:mod:`snacks_core.analysis`, model files in :mod:`snacks_core.persistence`, exported code in
:mod:`snacks_core.snippets`.
"""
