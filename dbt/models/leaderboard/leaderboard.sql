{{ config(materialized='table', schema='marts') }}
-- One row per model x benchmark: the headline metric and pass^k with their intervals, and whether
-- the benchmark's self-tests (gold answers through the same scorer) all passed for that run.
with scores as (
    select * from {{ ref('stg_benchmark_scores') }}
),
headline as (
    select * from scores
    where (benchmark = 'compoworld_heldout' and metric = 'success')
       or (benchmark = 'bfcl' and metric = 'accuracy')
       or (benchmark = 'tau2' and metric = 'reward')
),
pass_k as (
    select benchmark, model, mean, ci_low, ci_high from scores where metric = 'pass^k'
),
self_tests as (
    select benchmark, model, bool_and(mean >= 1.0) as self_tests_passed, count(*) as n_self_tests
    from scores where is_self_test group by benchmark, model
)
select h.model || '/' || h.benchmark as leaderboard_id,
       h.model,
       h.benchmark,
       h.metric as headline_metric,
       h.mean as score,
       h.ci_low as score_ci_low,
       h.ci_high as score_ci_high,
       p.mean as pass_hat_k,
       p.ci_low as pass_hat_k_ci_low,
       p.ci_high as pass_hat_k_ci_high,
       h.n as n_items,
       h.k as k_seeds,
       coalesce(s.self_tests_passed, false) as self_tests_passed,
       rank() over (partition by h.benchmark order by h.mean desc) as rank_in_benchmark
from headline h
left join pass_k p using (benchmark, model)
left join self_tests s using (benchmark, model)
