"""gbm.data.queries: the ``qid`` column of a DataFrame, split off the same way for the
local and the Dask ranker."""
import numpy as np
import pytest

from gbm.data.queries import pop_qid

pd = pytest.importorskip("pandas")


def _frame():
    return pd.DataFrame({"f0": [0.5, 1.5, 2.5, 3.5], "qid": [1, 1, 2, 2]})


def test_pop_qid_splits_the_column_off_a_frame():
    X, qid = pop_qid(_frame(), None)
    assert list(X.columns) == ["f0"]
    assert isinstance(qid, pd.Series) and qid.tolist() == [1, 1, 2, 2]


def test_pop_qid_leaves_other_input_and_the_argument_alone():
    array, given = np.ones((4, 2)), np.array([0, 0, 1, 1])
    assert pop_qid(array, given) == (array, given)
    frame = _frame().drop(columns="qid")
    X, qid = pop_qid(frame, given)
    assert X is frame and qid is given
    with pytest.raises(ValueError, match="found both a 'qid' column in X and the qid argument"):
        pop_qid(_frame(), given)


def test_pop_qid_of_a_dask_frame_stays_lazy():
    dd = pytest.importorskip("dask.dataframe")
    X, qid = pop_qid(dd.from_pandas(_frame(), npartitions=2), None)
    assert list(X.columns) == ["f0"] and hasattr(qid, "compute")
    assert qid.compute().tolist() == [1, 1, 2, 2]
