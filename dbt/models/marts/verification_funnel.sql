-- From specs to training data: how much survives each stage.
with task_gate as (
    select
        (select count(*) from {{ ref('stg_sampled_tasks') }}) as passed_gate,
        count(*) filter (where stage = 'gate') as failed_gate,
        count(*) filter (where stage = 'instantiate') as failed_instantiation
    from {{ ref('stg_quarantined_tasks') }}
)
select 'specs_imported' as stage, 1 as stage_order, count(*) as n from {{ ref('stg_service_specs') }}
union all
select 'specs_quarantined', 2, count(*) from {{ ref('stg_quarantined_specs') }}
union all
select 'services_built', 3, count(*) from {{ ref('stg_services') }}
union all
select 'tools', 4, count(*) from {{ ref('stg_tool_catalog') }}
union all
select 'tools_verified', 5, count(*) from {{ ref('stg_tool_catalog') }} where verdict = 'verified'
union all
select 'tasks_instantiation_failed', 6, failed_instantiation from task_gate
union all
select 'tasks_sampled', 7, passed_gate + failed_gate from task_gate
union all
select 'tasks_quarantined_at_gate', 8, failed_gate from task_gate
union all
select 'tasks_passed_gate', 9, passed_gate from task_gate
union all
select 'trajectories', 10, count(*) from {{ ref('stg_trajectories') }}
union all
select 'trajectories_verified', 11, count(*) from {{ ref('stg_verified_trajectories') }} where passed
union all
select 'sft_samples', 12, count(*) from {{ ref('stg_sft_dataset') }}
union all
select 'rl_tasks', 13, count(*) from {{ ref('stg_rl_tasks') }}
order by stage_order
