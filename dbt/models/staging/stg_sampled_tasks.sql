-- task_json (the whole task, tens of KB) stays in the pipeline table.
select task_id, round, split, plan_hash, domain, services, n_services, n_steps, n_write_steps, n_criteria,
       capabilities, service_combination, task_hash
from {{ source('compoworld', 'sampled_tasks') }}
