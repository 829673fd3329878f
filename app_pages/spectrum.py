"""Spectrum: eigenvalue decay of the landmark kernel matrix and kernel approximation error."""

import numpy as np
import pandas as pd
import streamlit as st

from snacks_core.app import cached, lessons, state, training, user_errors
from snacks_core.app.figures.spectrum import approximation_error_figure, spectrum_figure
from snacks_core.app.teaching import CAPTIONS, HELP
from snacks_core.kernels import spectra

st.title("Spectrum")
st.caption("How many landmarks does this kernel need? The eigenvalues of the landmark kernel "
           "matrix K_mm tell: a fast decay means a few directions carry the kernel.")
lessons.lesson_banner()

request, split = user_errors.load_split_or_stop()
params = cached.model_params()
if params["kernel"] == "linear":
    st.info("The linear kernel has rank at most d (the number of features): its spectrum is "
            "not a question of bandwidth. Choose rbf or laplacian in the sidebar.",
            icon=":material/info:")
    st.stop()
left, right = st.columns([3, 2])
left.multiselect("Bandwidths (factors of the sidebar γ)" if params["kernel"] != "polynomial"
                 else "Values of γ (factors of the sidebar γ)", state.GAMMA_FACTORS,
                 key="spec_factors", format_func=lambda f: f"γ × {f:g}", help=HELP["spec_factors"])
right.select_slider("Landmarks for the spectrum (and largest m below)",
                    state.SETTINGS["spec_max_m"].choices, key="spec_max_m",
                    help=HELP["spec_max_m"])
factors = sorted(state.current("spec_factors")) or [1.0]
m = state.current("spec_max_m")
if not training.training_gate("spectrum", split, params, ()):
    st.stop()

with user_errors.stop_on_user_error(), st.spinner("Eigen-decomposing K_mm…"):
    curves = cached.spectrum(request, split, params, sorted(set(factors) | {1.0}), m)
base_label = next(label for label in curves if label.endswith("(×1)"))
base = curves[base_label]
lam = float(params["lam"])
d_eff = spectra.effective_dimension(base, lam)
shown = {label: values for label, values in curves.items()
         if float(label.rsplit("×", 1)[1].rstrip(")")) in factors}

col_spectrum, col_error = st.columns(2)
with col_spectrum:
    st.subheader("Eigenvalue decay of K_mm")
    st.plotly_chart(spectrum_figure(
        shown, threshold=len(base) * lam / base[0] if base[0] > 0 else None,
        threshold_label=f"mλ/μ₁ (λ = {lam:g}): eigenvalues below count < ½ in d_eff"),
        width="stretch", key="spectrum")
    a, b = st.columns(2)
    a.metric("Effective dimension d_eff(λ)", f"{d_eff:.1f}", help=HELP["d_eff"])
    b.metric("Landmarks m in the sidebar", f"{state.current('m')}",
             delta=f"{state.current('m') / max(d_eff, 1e-9):.1f} × d_eff", delta_color="off")
    st.caption(CAPTIONS["spectrum_polynomial" if params["kernel"] == "polynomial"
                        else "spectrum"])

with col_error:
    st.subheader("Approximation error against m")
    m_values = sorted({int(v) for v in np.geomspace(5, m, 6).round()})
    with user_errors.stop_on_user_error(), st.spinner("Comparing Nyström and random features…"):
        m_used, errors = cached.approximation(request, split, params, m_values, (0, 1, 2))
    st.plotly_chart(approximation_error_figure(m_used, errors), width="stretch",
                    key="approximation")
    st.caption(CAPTIONS["approximation_polynomial" if params["kernel"] == "polynomial"
                        else "approximation"])

st.subheader("HSS compression (the ADMM solver's kernel)")
st.caption("ADMM stores the whole n × n kernel as a hierarchically semi-separable (HSS) "
           "matrix: exact blocks on the diagonal, low-rank blocks elsewhere, each rank chosen "
           "so that the block's sampled entries are approximated to a target accuracy. The "
           "table gives, per target, the memory against the dense matrix, the ranks and the "
           "relative error ‖K̃ − K‖_F/‖K‖_F measured on 32 sampled columns, which can exceed "
           "the target: each block meets it on the entries sampled to build it, and the "
           "nested bases compound their errors.")
if st.button("Measure the HSS compression", icon=":material/compress:"):
    with user_errors.stop_on_user_error(), st.spinner("Compressing the kernel matrix…"):
        rows = cached.compression(request, split, params)
    st.dataframe(pd.DataFrame([{
        "target accuracy": row["target"],
        "relative error (sampled)": row["relative_error"],
        "memory (MB)": row["memory_bytes"] / 2**20,
        "dense kernel (MB)": row["dense_bytes"] / 2**20,
        "compression": f"{row['compression_ratio']:.1f}×",
        "mean rank": row["mean_rank"],
        "largest rank": row["max_rank_reached"],
        "ranks capped": f"{row['ranks_capped']} of {row['nodes']}",
        "build (s)": row["compression_time"] + row["factorization_time"],
    } for row in rows]), hide_index=True, width="stretch")
