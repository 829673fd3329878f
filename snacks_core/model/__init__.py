"""The model: the defaults rule, a fit's specification, the one fit engine, the estimator, the
grids and the search."""
