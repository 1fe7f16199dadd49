"""Campaigns on a store: campaign and agents files, the candidate runs of each declared agent (run
here or imported), review items materialized from pairable runs, and amendments of the records under
them, each appended to the ledger (docs/human-review.md, "Campaign files", "Candidate runs" and
"Materialize")."""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.human_review.campaigns._agents import BackendFor as BackendFor
    from reviewtrail.human_review.campaigns._agents import backend_builder as backend_builder
    from reviewtrail.human_review.campaigns._agents import build_backend as build_backend
    from reviewtrail.human_review.campaigns._agents_file import MAX_AGENTS as MAX_AGENTS
    from reviewtrail.human_review.campaigns._agents_file import MAX_SCRIPTED_RESPONSES as MAX_SCRIPTED_RESPONSES
    from reviewtrail.human_review.campaigns._agents_file import AgentConfig as AgentConfig
    from reviewtrail.human_review.campaigns._agents_file import AnthropicBackendSpec as AnthropicBackendSpec
    from reviewtrail.human_review.campaigns._agents_file import BackendSpec as BackendSpec
    from reviewtrail.human_review.campaigns._agents_file import OpenAIBackendSpec as OpenAIBackendSpec
    from reviewtrail.human_review.campaigns._agents_file import ScriptedBackendSpec as ScriptedBackendSpec
    from reviewtrail.human_review.campaigns._agents_file import parse_agents_file as parse_agents_file
    from reviewtrail.human_review.campaigns._amend import AMENDABLE as AMENDABLE
    from reviewtrail.human_review.campaigns._amend import Amendment as Amendment
    from reviewtrail.human_review.campaigns._amend import correct_output as correct_output
    from reviewtrail.human_review.campaigns._amend import correct_run as correct_run
    from reviewtrail.human_review.campaigns._amend import reclassify as reclassify
    from reviewtrail.human_review.campaigns._campaign_file import CampaignEntry as CampaignEntry
    from reviewtrail.human_review.campaigns._campaign_file import FileFormat as FileFormat
    from reviewtrail.human_review.campaigns._campaign_file import file_format as file_format
    from reviewtrail.human_review.campaigns._campaign_file import parse_campaign_file as parse_campaign_file
    from reviewtrail.human_review.campaigns._campaigns import CampaignSummary as CampaignSummary
    from reviewtrail.human_review.campaigns._campaigns import ImportedPrompt as ImportedPrompt
    from reviewtrail.human_review.campaigns._campaigns import ImportResult as ImportResult
    from reviewtrail.human_review.campaigns._campaigns import SettingsView as SettingsView
    from reviewtrail.human_review.campaigns._campaigns import campaign_settings as campaign_settings
    from reviewtrail.human_review.campaigns._campaigns import import_campaign as import_campaign
    from reviewtrail.human_review.campaigns._campaigns import list_campaigns as list_campaigns
    from reviewtrail.human_review.campaigns._campaigns import require_campaign as require_campaign
    from reviewtrail.human_review.campaigns._import_runs import MAX_IMPORT_OUTPUTS as MAX_IMPORT_OUTPUTS
    from reviewtrail.human_review.campaigns._import_runs import ImportedRun as ImportedRun
    from reviewtrail.human_review.campaigns._import_runs import ImportRunsReport as ImportRunsReport
    from reviewtrail.human_review.campaigns._import_runs import import_runs as import_runs
    from reviewtrail.human_review.campaigns._materialize import MATERIALIZE_BATCH as MATERIALIZE_BATCH
    from reviewtrail.human_review.campaigns._materialize import MaterializeReport as MaterializeReport
    from reviewtrail.human_review.campaigns._materialize import PromptMaterialized as PromptMaterialized
    from reviewtrail.human_review.campaigns._materialize import materialize as materialize
    from reviewtrail.human_review.campaigns._run_batch import RunOutcome as RunOutcome
    from reviewtrail.human_review.campaigns._run_batch import item_record as item_record
    from reviewtrail.human_review.campaigns._run_batch import new_item_record_of as new_item_record_of
    from reviewtrail.human_review.campaigns._run_batch import new_run_id as new_run_id
    from reviewtrail.human_review.campaigns._run_batch import prompt_text_hash as prompt_text_hash
    from reviewtrail.human_review.campaigns._run_batch import response_problem as response_problem
    from reviewtrail.human_review.campaigns._run_batch import run_records as run_records
    from reviewtrail.human_review.campaigns._runner import RUN_STATUSES_REPORTED as RUN_STATUSES_REPORTED
    from reviewtrail.human_review.campaigns._runner import RunEntry as RunEntry
    from reviewtrail.human_review.campaigns._runner import RunProgress as RunProgress
    from reviewtrail.human_review.campaigns._runner import RunReport as RunReport
    from reviewtrail.human_review.campaigns._runner import run_campaign as run_campaign
else:
    __getattr__, __dir__ = _face.lazy(__name__)
