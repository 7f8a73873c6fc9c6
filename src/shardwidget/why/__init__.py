"""Why a collective is there, and what removes it: :mod:`.sdy` (Shardy's propagation record as
data), :mod:`.cause_match` and :mod:`.cause_text` (one collective matched to the ops and
shardings behind it, in words), :mod:`.cause` (the cause of each collective), :mod:`.explain`
(compiles with Shardy's dump and explains collectives lazily), :mod:`.fixes` (the layouts that
remove one, compiled to check)."""
