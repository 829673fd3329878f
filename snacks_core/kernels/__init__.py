"""Kernels and what is built from them: kernel functions and blocks, landmark selection, the
Nyström embedding, random features, kernel operators, HSS compression and spectra."""
