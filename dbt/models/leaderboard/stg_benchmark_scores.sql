{{ config(materialized='view', schema='staging') }}
select benchmark,
       model,
       metric,
       mean,
       ci_low,
       ci_high,
       ci_high - ci_low as ci_width,
       n,
       k,
       starts_with(metric, 'self_test:') as is_self_test
from {{ source('evaluation', 'benchmark_scores') }}
