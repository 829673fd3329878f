"""Streamlit helpers of the explorer: session state, cached calls, shared widgets and texts.

Only Streamlit code lives here: the computations the pages show are in
:mod:`snacks_core.analysis`, model files and exported code in :mod:`snacks_core.persistence`.
"""
