"""The read side: pure folds of the log into rows, tables and the record, and the statistics they
use (`projections.stats`). Import from the module that defines a name: this package imports
nothing, so a command loads only the projections it uses."""
