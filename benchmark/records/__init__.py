"""What a run leaves: its report and record, publication, the regression gate, sizing a plan from
earlier records, export and auditing.

Imports no other room of `benchmark/`."""
