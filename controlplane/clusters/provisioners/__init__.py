"""Provisioners start and stop broker processes for a provider; `local` runs them on this host."""
