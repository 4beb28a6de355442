-- Share of verified trajectories that pass each kind of rubric criterion (state, answer, negative).
with results as (
    select
        v.task_id,
        v.round,
        unnest(json_transform(v.criteria_json, '[{"id": "VARCHAR", "passed": "BOOLEAN"}]')) as criterion
    from {{ ref('stg_verified_trajectories') }} as v
)
select
    r.kind,
    count(*) as n_evaluated,
    count(*) filter (where c.criterion.passed) as n_passed,
    round(count(*) filter (where c.criterion.passed) / count(*), 4) as pass_rate
from results as c
left join {{ ref('stg_rubrics') }} as r
    on r.task_id = c.task_id and r.round = c.round and r.criterion_id = c.criterion.id
group by r.kind
order by r.kind
