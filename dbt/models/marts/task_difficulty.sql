-- Tasks that passed the gate by round, split, plan length and number of services.
select
    t.round,
    t.split,
    t.n_steps,
    t.n_services,
    t.round || '/' || t.split || '/' || t.n_steps || '/' || t.n_services as bucket,
    count(*) as n_tasks,
    round(avg(t.n_write_steps), 4) as mean_write_steps,
    round(avg(t.n_criteria), 4) as mean_criteria
from {{ ref('stg_sampled_tasks') }} as t
group by t.round, t.split, t.n_steps, t.n_services
order by t.round, t.split, t.n_steps, t.n_services
