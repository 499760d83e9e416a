"""Share groups (KIP-932): membership, share-partition delivery state, share sessions."""
