"""The one translation from a user's settings (the app's sidebar, the command line's options)
to an estimator."""

from __future__ import annotations

from .estimator import SnacksClassifier


def estimator_from_settings(settings: dict, *, solver_options: dict | None = None
                            ) -> SnacksClassifier:
    """A :class:`~snacks_core.SnacksClassifier` from a dict of its parameters.

    Parameters
    ----------
    settings : dict
        Estimator parameters by name (``kernel``, ``gamma``, ``n_components``, ``lam``,
        ``solver``, ``tol``, ``memory_budget``, …); those not given keep the estimator's
        defaults.  Values are checked by ``fit``, as scikit-learn does.
    solver_options : dict, optional
        The estimator's ``solver_options`` (a solver callback, for instance).

    Raises
    ------
    ValueError
        For a name that is no parameter of the estimator, listing those that are.

    Examples
    --------
    >>> estimator_from_settings({"kernel": "linear", "lam": 1e-3}).lam
    0.001
    """
    known = SnacksClassifier().get_params()
    unknown = sorted(set(settings) - set(known) | ({"solver_options"} & set(settings)))
    if unknown:
        raise ValueError(f"unknown model parameters {unknown}; known: "
                         f"{sorted(set(known) - {'solver_options'})}.")
    return SnacksClassifier(**settings, solver_options=solver_options)
