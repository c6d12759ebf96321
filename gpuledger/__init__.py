"""The engine, one package per stage in flow order: ``warehouse`` (the home, connections, SQL files) ->
``normalize`` (source files -> FOCUS rows) -> ``gates`` (a delivery is checked, reconciled and admitted or held)
-> ``telemetry`` -> ``allocation`` (the split and showback) -> ``chargeback`` (months and statements) ->
``publish`` (the analyst file) -> ``reports``. A stage imports only the stages before it (docs/decisions/0012)."""
