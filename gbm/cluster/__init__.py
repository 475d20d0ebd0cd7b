"""What the cluster engines share (``gbm.dask``, ``gbm.spark``, ``gbm.ray``): the ranks'
direct TCP mesh (``sockets``) and a collective over it (``collective``), what a rank keeps
of its last completed round and how a later attempt goes on from it (``progress``), the
errors of lost ranks (``errors``), and one rank's training (``rank``)."""
