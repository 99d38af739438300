"""The projection (PCA) and the two-stage dense search of the vector matrix."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from assistant.memory.projection import Projection
from assistant.memory.quantize import stored
from assistant.memory.vectors import PROJECTED_DIM, REFIT_GROWTH, VectorMatrix
from tests.clusters import DIM, centres, clustered

FloatMatrix = npt.NDArray[np.float32]


def refit(matrix: VectorMatrix, exact_up_to: int) -> bool:
    """Fit the matrix's projection if it is due, as the store does; whether it was fitted."""
    if not matrix.refit_due(exact_up_to):
        return False
    snapshot = matrix.begin_refit()
    matrix.end_refit(snapshot, snapshot.compute())
    return True


def filled(rows: FloatMatrix) -> VectorMatrix:
    matrix = VectorMatrix("test", DIM)
    matrix.set_many(range(len(rows)), rows)
    return matrix


def test_fit_is_orthonormal_and_deterministic() -> None:
    rng = np.random.default_rng(1)
    rows = clustered(rng, 3000, centres(rng))
    projection = Projection.fit(rows, d=64)
    again = Projection.fit(rows, d=64)
    assert projection.basis.shape == (DIM, 64)
    assert projection.basis.dtype == projection.mean.dtype == np.float32
    gram = projection.basis.T @ projection.basis
    np.testing.assert_allclose(gram, np.eye(64), atol=1e-5)
    np.testing.assert_array_equal(again.basis, projection.basis)
    np.testing.assert_array_equal(again.mean, projection.mean)
    other = Projection.fit(rows, d=64, seed=1)
    assert not np.array_equal(other.mean, projection.mean)  # another sample


def test_fit_finds_the_principal_subspace() -> None:
    rng = np.random.default_rng(2)
    subspace, _ = np.linalg.qr(rng.standard_normal((DIM, 10)))
    offset = rng.standard_normal(DIM)
    rows = (offset + rng.standard_normal((5000, 10)) * 3 @ subspace.T).astype(np.float32)
    rows += 0.01 * rng.standard_normal(rows.shape).astype(np.float32)
    projection = Projection.fit(rows, d=10)
    # The fitted basis spans the subspace: its projection onto the subspace keeps its length.
    np.testing.assert_allclose(np.linalg.norm(subspace.T @ projection.basis, axis=0), 1, atol=1e-3)
    centred = rows - projection.mean
    restored = projection.project(rows) @ projection.basis.T
    assert np.abs(restored - centred).max() < 0.1 < np.abs(centred).max()


def test_project_is_the_centred_rows_on_the_basis() -> None:
    rng = np.random.default_rng(3)
    rows = clustered(rng, 500, centres(rng))
    projection = Projection.fit(rows, d=32)
    expected = (rows - projection.mean) @ projection.basis
    np.testing.assert_allclose(projection.project(rows), expected, atol=1e-5)
    query = rows[0]
    np.testing.assert_allclose(projection.project_query(query), query @ projection.basis, atol=1e-6)


def test_fit_only_sees_the_rows_among() -> None:
    rng = np.random.default_rng(4)
    rows = clustered(rng, 400, centres(rng))
    rows[::2] = 1e6  # rows the fit must not look at
    among = np.arange(1, 400, 2)
    projection = Projection.fit(rows, d=16, among=among)
    alone = Projection.fit(rows[among], d=16)
    np.testing.assert_array_equal(projection.basis, alone.basis)
    with pytest.raises(ValueError, match="at least one row"):
        Projection.fit(rows, among=np.arange(0))


def test_two_stage_search_equals_exact_search() -> None:
    rng = np.random.default_rng(5)
    topics = centres(rng)
    rows = clustered(rng, 4000, topics)
    matrix = filled(rows)
    refit(matrix, 1000)
    assert matrix.projection is not None and matrix.projection.d == PROJECTED_DIM
    allowed = rng.random(4000) < 0.9  # e.g. archived items are left out
    queries = clustered(rng, 30, topics)
    for query in queries:
        exact_slots, exact_sims = matrix.nearest(
            query, allowed, 10, exact_up_to=10**9, candidates=100
        )
        slots, sims = matrix.nearest(query, allowed, 10, exact_up_to=1000, candidates=100)
        assert slots.tolist() == exact_slots.tolist()
        np.testing.assert_allclose(sims, exact_sims, atol=1e-6)
        assert allowed[slots].all()
        kept = matrix._m[slots]  # as it keeps them: 8 bits and a scale, 1e-3 from `rows`
        np.testing.assert_allclose(sims, kept @ query, atol=1e-6)  # exact cosines
        np.testing.assert_allclose(sims, rows[slots] @ query, atol=2e-3)
    few = np.zeros(4000, dtype=bool)
    few[rng.choice(4000, 20, replace=False)] = True  # fewer than the candidates
    slots, _ = matrix.nearest(queries[0], few, 10, exact_up_to=1000, candidates=100)
    assert len(slots) == 10
    assert few[slots].all()


def test_two_stage_recall_and_that_it_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(6)
    topics = centres(rng, 25)
    matrix = filled(clustered(rng, 5000, topics))
    refit(matrix, 1000)
    allowed = np.ones(5000, dtype=bool)
    estimates = 0
    project_query = Projection.project_query

    def counting(self: Projection, query: FloatMatrix) -> FloatMatrix:
        nonlocal estimates
        estimates += 1
        return project_query(self, query)

    monkeypatch.setattr(Projection, "project_query", counting)
    found, wanted = 0, 0
    for i, query in enumerate(clustered(rng, 40, topics)):
        exact, sims = matrix.nearest(query, allowed, 50, exact_up_to=10**9, candidates=0)
        assert estimates == i  # the exact search does not estimate
        slots, _ = matrix.nearest(query, allowed, 50, exact_up_to=1000, candidates=500)
        relevant = set(exact[sims >= 0.3].tolist())
        found += len(relevant & set(slots.tolist()))
        wanted += len(relevant)
    assert estimates == 40
    assert wanted > 40 * 30
    assert found / wanted >= 0.99


def test_small_or_unprojected_matrices_are_scanned_exactly() -> None:
    rng = np.random.default_rng(7)
    rows = clustered(rng, 300, centres(rng))
    matrix = filled(rows)
    refit(matrix, 300)
    assert matrix.projection is None  # not more than exact_up_to vectors
    query = stored(rows[5:6])[0]
    slots, sims = matrix.nearest(query, np.ones(300, dtype=bool), 3, exact_up_to=0, candidates=10)
    assert slots[0] == 5
    assert sims[0] == pytest.approx(float(query @ query), abs=1e-6)
    assert (
        matrix.nearest(query, np.ones(300, dtype=bool), 0, exact_up_to=0, candidates=10)[0].tolist()
        == []
    )


def test_projected_rows_follow_sets_and_clears() -> None:
    rng = np.random.default_rng(8)
    topics = centres(rng)
    matrix = filled(clustered(rng, 600, topics))
    refit(matrix, 500)
    projection = matrix.projection
    assert projection is not None
    matrix.set_many([3, 700, 2000], clustered(rng, 3, topics))  # replace one, add two (grows)
    matrix.set(10, rng.standard_normal(DIM) * 5)  # not unit: stored normalized
    matrix.clear(4)
    matrix.clear(4)  # no vector: no change
    assert matrix.projection is projection  # no refit: not grown 4x
    slots = np.flatnonzero(matrix.present(2001))
    assert len(slots) == matrix.count == 601
    np.testing.assert_allclose(
        matrix._projected[slots], projection.project(matrix._m[slots]), atol=1e-5
    )
    assert not matrix.has(4)
    query = matrix._m[2000]
    best, _ = matrix.nearest(query, np.ones(2001, dtype=bool), 1, exact_up_to=500, candidates=50)
    assert best.tolist() == [2000]


def test_refit_when_the_vectors_have_grown(fits: list[int]) -> None:
    rng = np.random.default_rng(9)
    matrix = VectorMatrix("test", DIM)
    rows = clustered(rng, 900, centres(rng))
    for start in range(0, 900, 50):
        matrix.set_many(range(start, start + 50), rows[start : start + 50])
        refit(matrix, 100)
    assert fits == [150, 150 * REFIT_GROWTH]  # first past 100, then at 4x as many
    for slot in range(600):
        matrix.clear(slot)
    refit(matrix, 100)
    assert fits == [150, 600]  # shrinking does not refit
