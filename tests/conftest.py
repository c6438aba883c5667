"""Shared test setup: Hypothesis profiles, GPU/oracle/nvcc auto-skips, and the test tiers (markers).

The tiers (tests/README.md): ``solver`` (calls z3), ``cvc5`` (calls cvc5), ``subprocess`` (starts another
process) and ``slow`` (over ~5 s on a quiet machine) are given here, from the one table :data:`TIERS`, so the
tiers are read in one place and test files carry no marker boilerplate (tests/test_tiers.py checks that every
entry names a test that exists, so a renamed or moved test cannot silently drop out). ``cvc5`` implies
``solver``. ``ATTNIO_MARKER_AUDIT=1`` checks the table: a test that calls z3 or cvc5 or starts a process
without the marker errors at teardown, naming what it used.

The ``nightly`` tier holds the per-claim re-proofs of the catalog (each claim z3 or cvc5 proves is also in the
proof record, reports/crosscheck.json, whose freshness the default run checks without a solver, and which CI
brings up to date with ``attnio verify --stale --solver both``). A test listed in :data:`SAMPLED` keeps a
small deterministic sample of its parametrisations in the default run, the rest are ``nightly``. ``nightly``
tests, and ``slow`` ones, are deselected unless ``ATTNIO_NIGHTLY=1`` or ``-m`` names ``nightly`` or ``slow``: the
long tier, which tools/long_tier.sh runs (in CI whenever the repository's inputs changed since its last passing
run) and tools/nightly.sh with the nightly profile.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# Triton runs here only under its interpreter (CPU), and Triton reads TRITON_INTERPRET when it is imported: set it
# before any test module (or a doctest of attnio.triton) imports Triton, so the order of collection cannot matter.
os.environ.setdefault("TRITON_INTERPRET", "1")
# Tests keep Triton counts per process only: nothing written into the user's cache folder (attnio.triton.cache).
os.environ.setdefault("ATTNIO_CACHE", "0")

# The long runs: no deadline (shared machines are noisy), a failing example printed as a blob to reproduce it.
_LONG_RUN = dict(deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
# "ci" is loaded when CI is set: deterministic. Every test takes its example count from the profile (a test may
# ask for fewer, never more); the many examples are the nightly run's (tools/nightly.sh).
settings.register_profile("ci", max_examples=50, derandomize=True, **_LONG_RUN)
# "nightly": the long run (ATTNIO_HYPOTHESIS_PROFILE=nightly), e.g. 1,000 command lines in tests/test_cli_fuzz.py.
settings.register_profile("nightly", max_examples=1000, derandomize=False, **_LONG_RUN)
settings.register_profile("dev", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# "mutation": tools/mutation.sh runs the tests once per mutant; few examples, the same ones every run, no saved
# examples carried from one mutant to the next.
settings.register_profile(
    "mutation",
    max_examples=20,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(os.environ.get("ATTNIO_HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def _has_torch() -> bool:
    try:
        import torch  # noqa: F401

        return True
    except Exception:
        return False


# The cvc5 tests that run cvc5 in a subprocess: they carry both markers.
_CVC5_IN_A_SUBPROCESS = (
        "test_bspv.py::test_claim_second_opinion_cvc5",
        "test_backward_slots.py::test_cvc5_proves_the_slots_steps_too",
        "test_backward_slots_dv.py::test_cvc5_proves_the_dv_steps_too",
        "test_approx_bounds.py::test_derivation_step_is_proved_by_z3_and_by_cvc5",
        "test_backward_claims.py::test_cvc5_proves_the_bwd_sdp_steps_too",
        "test_backward_small.py::test_every_small_cache_claim_is_proved_by_z3_and_cvc5",
)

# marker -> the tests that carry it: "file.py" (every test of the file) or "file.py::test_name" (every
# parametrisation of that test). Kept honest by ATTNIO_MARKER_AUDIT=1 (see the module docstring).
TIERS: dict[str, tuple[str, ...]] = {
    "cvc5": (
        "test_distributed_bound.py::test_step_and_consistency_claims_are_reproved_by_cvc5",
        *_CVC5_IN_A_SUBPROCESS,
        "test_backward_lift.py::test_every_lift_claim_is_proved_by_z3_and_cvc5",
        "test_backward_once.py::test_every_once_claim_is_proved_by_z3_and_cvc5",
        "test_cli_json.py::test_verify_record_needs_both_solvers_and_the_whole_catalog",
        "test_constants.py::test_step_claim_second_opinion_cvc5",
        "test_solver.py::test_cvc5_agrees_with_z3",
        "test_solver.py::test_cvc5_recheck_through_lemmas_counts_only_when_every_lemma_is_re_proved",
        "test_workloads_bwd.py::test_cvc5_re_proves_the_chain_links",
        "test_b3p.py::test_step_claim_is_proved_by_z3_and_by_cvc5",
        "test_mask_claims.py::test_claim_is_proved_by_z3_and_by_cvc5_causal_links_and_every_other_claim",
        "test_bwd_slots_p.py::test_claim_is_proved_by_z3_and_by_cvc5",
    ),
    # found by the marker audit (test_vacuity.py: every test)
    "solver": (
        "test_backward_slots.py::test_a_larger_leading_constant_is_refuted",
        "test_backward_slots.py::test_a_smaller_per_segment_constant_is_refuted",
        "test_backward_slots.py::test_bwd_slots_x_mutants_are_refuted",
        "test_backward_slots.py::test_step_9_needs_its_threshold",
        "test_backward_slots_dv.py::test_a_larger_leading_constant_is_refuted",
        "test_backward_slots_dv.py::test_a_face_constant_below_the_true_maximum_is_refuted",
        "test_backward_slots_dv.py::test_a_per_segment_constant_below_the_true_maximum_is_refuted",
        "test_backward_slots_dv.py::test_the_threshold_and_gamma_cannot_be_lowered_much",
        "test_bspv.py::test_claim_proved_by_z3",
        "test_bspv.py::test_tightened_step_is_refuted_with_a_counterexample",
        "test_bspv_cap.py::test_tightened_step_is_refuted_with_a_counterexample",
        "test_approx_bounds.py::test_tightened_step_is_refuted_with_a_valid_counterexample",
        "test_api.py::test_catalog_bound_claims_and_errors",
        "test_backward_claims.py::test_every_backward_step_and_consistency_link_is_proved",
        "test_backward_claims.py::test_leading_crossover_of_the_backward_is_derived_near_M_equal_d_squared",
        "test_backward_claims.py::test_the_exact_crossover_proves_the_sides_its_cvc5_lemmas_state",
        "test_backward_claims.py::test_tightest_backward_constants_are_proved_with_the_step_below_refuted",
        "test_backward_claims.py::test_tile_integrality_facts_hold_at_integer_points",
        "test_backward_lift.py::test_a_larger_rearrangement_constant_is_refuted",
        "test_backward_lift.py::test_a_larger_near_constant_is_refuted",
        "test_backward_lift.py::test_a_mutant_claim_list_with_a_larger_constant_is_refuted",
        "test_backward_lift.py::test_each_case_of_the_near_maximum_needs_its_end_of_the_regime",
        "test_backward_lift.py::test_the_pair_face_without_the_double_charge_is_refuted",
        "test_backward_once.py::test_a_bilinear_constant_below_the_eigenvalue_is_refuted",
        "test_backward_once.py::test_larger_leading_constants_are_refuted",
        "test_backward_once.py::test_the_pair_face_keeps_the_full_kappa_only_because_each_word_is_counted_once",
        "test_backward_small.py::test_a_merge_without_the_shared_budget_is_refuted",
        "test_backward_small.py::test_a_wrong_rearrangement_constant_is_refuted",
        "test_backward_small.py::test_the_bs_steps_the_small_cache_bounds_reuse_are_proved",
        "test_cli_json.py::test_record_written_atomically_and_read_back_with_fingerprints",
        "test_cli_json.py::test_verify_json_lists_each_witness_and_a_vacuous_claim_exits_1",
        "test_constants.py::test_lower_bounds_below_every_exact_cost_proved_by_z3",
        "test_constants.py::test_small_cache_bound_below_every_exact_cost_proved_by_z3",
        "test_constants.py::test_step_claim_proved_by_z3",
        "test_constants.py::test_wrong_step_is_refuted_with_a_counterexample",
        "test_doctests.py::test_doctest",
        "test_links.py::test_cli_bounds_id_shows_statement_schedule_formula_and_claims_with_verdicts",
        "test_mutations.py::test_wrong_claim_is_refuted_with_a_valid_counterexample",
        "test_pebble.py::test_sat_engines_are_optimal_only_within_their_horizon",
        "test_solver.py::test_coverage_finds_the_overlap_when_its_domain_condition_is_dropped",
        "test_solver.py::test_crossover_boundary_is_derived_not_typed",
        "test_solver.py::test_denominator_that_can_vanish_is_reported_not_assumed",
        "test_solver.py::test_log2_bracketing_is_sound_and_usable",
        "test_solver.py::test_log2_is_pinned_exactly_at_every_power_of_two_of_its_range",
        "test_solver.py::test_real_mode_floor_and_ceil_brackets_are_sound_and_tight_for_ratios",
        "test_solver.py::test_real_mode_floor_of_zero_is_zero_and_log2_between_powers_of_two_is_chord_and_tangent",
        "test_solver.py::test_real_only_counterexample_is_rechecked_over_integers",
        "test_solver.py::test_the_translation_of_an_expression_is_exactly_its_value_at_integer_points",
        "test_solver.py::test_tightest_constant_is_proved_and_the_step_below_refuted_at_a_real_point",
        "test_solver.py::test_translator_proves_true_facts",
        "test_solver.py::test_translator_refutes_false_facts_with_valid_integer_counterexample",
        "test_vacuity.py",
        "test_workloads.py::test_every_workload_claim_is_proved_by_z3",
        "test_masks.py::test_closed_forms_proved_by_z3_against_the_definition_on_all_small_cases",
        "test_b3p.py::test_tightened_step_is_refuted_with_a_valid_counterexample",
        "test_mask_claims.py::test_claim_is_proved_by_z3",
        "test_mask_claims.py::test_mutant_is_refuted_with_a_valid_counterexample",
        "test_bwd_slots_p.py::test_mutants_are_refuted",
        "test_distributed_claims.py::test_claim_is_proved_by_z3",
        "test_distributed_claims.py::test_mutant_is_refuted_with_a_valid_counterexample",
        "test_distributed_bound.py::test_step_and_consistency_claims_are_proved_by_z3",
        "test_distributed_bound.py::test_a_larger_constant_is_refuted_against_attention2d",
    ),
    # found by the marker audit
    "subprocess": (
        *_CVC5_IN_A_SUBPROCESS,
        "test_api.py::test_import_of_the_base_modules_loads_no_layer",
        "test_api.py::test_readme_python_example_runs",
        "test_backward.py::test_report_section_lists_the_backward_constants_and_the_training_step",
        "test_byo.py::test_checker_fails_a_wrong_claim_and_a_wrong_formula_with_readable_lines",
        "test_byo.py::test_doc_example_end_to_end_check_store_and_report",
        "test_byo.py::test_doc_example_sweep_with_a_grid_file_that_imports_the_algorithm",
        "test_catalog.py::test_cli_bounds_json_lists_the_catalog",
        "test_cli_json.py::test_record_written_atomically_and_read_back_with_fingerprints",
        "test_cli_pipe.py::test_a_real_pipe_closed_before_the_first_line_leaves_stderr_empty",
        "test_cuda.py::test_cuda_source_compiles_with_nvcc",
        "test_cuda.py::test_emulated_flash2_count_equals_model_on_random_shapes",
        "test_cuda.py::test_emulated_flash2_counts_equal_the_model_and_output_matches_reference",
        "test_cuda.py::test_emulated_kernels_have_no_shared_memory_race",
        "test_cuda.py::test_emulated_square_tiling_count_equals_model_on_random_shapes",
        "test_cuda.py::test_emulated_square_tiling_counts_equal_the_model_and_output_matches_reference",
        "test_cuda.py::test_timed_build_computes_the_same_output_and_counts_nothing",
        "test_machine.py::test_machine_misuse_is_an_error_under_python_O",
        "test_packaging.py::test_layer_contracts_hold_on_the_installed_package",
        "test_packaging.py::test_no_generic_top_level_name_is_importable_from_an_installed_attnio",
        "test_poly.py::test_cli_prints_rank_degree_error_counts_and_schedule_and_exits_2_on_bad_input",
        "test_report.py::test_cli_report_twice_with_different_worker_counts_is_byte_identical",
        "test_solver.py::test_cli_verify_exit_codes",
        "test_solver.py::test_verify_all_selects_and_reports_plain_data",
        "test_sweep.py::test_cli_bad_grid_is_one_line_and_exit_2",
        "test_sweep.py::test_dask_local_cluster_on_loopback_gives_the_same_rows",
        "test_sweep.py::test_process_pool_gives_the_same_rows_as_in_process",
        "test_sweep.py::test_sigkill_mid_sweep_then_rerun_loses_and_duplicates_nothing",
        "test_sweep.py::test_two_sweeps_writing_one_store_at_once_stay_consistent",
        "test_vacuity.py::test_verdicts_identical_with_a_cpu_hog_beside_one_run",
        "test_validation.py::test_cli_subprocess_bad_input_prints_no_traceback",
        "test_b3p.py::test_step_claim_is_proved_by_z3_and_by_cvc5",
        "test_mask_claims.py::test_claim_is_proved_by_z3_and_by_cvc5_causal_links_and_every_other_claim",
        "test_bwd_slots_p.py::test_claim_is_proved_by_z3_and_by_cvc5",
        "test_backward_lift.py::test_every_lift_claim_is_proved_by_z3_and_cvc5",
        "test_distributed_gloo.py",
    ),
    # 15 s or more in the measured fast loop on the loaded shared machine (about 5 s quiet)
    "slow": (
        "test_triton_scale.py::test_sampled_equals_full_run",
        "test_l2_trace.py::test_backward_trace_replay_equals_the_tile_replay",
        "test_l2_trace.py::test_causal_forward_whole_tiles_exact_partial_tiles_request_less",
        "test_l2_trace.py::test_cli_kernel_l2_json_and_bad_input",
        "test_triton_scale.py::test_fa2_backward_fast_equals_full_run",
        "test_triton_scale.py::test_square_tiling_fast_equals_full_run",
        "test_triton_scale.py::test_shipped_kernels_fast_equal_full_run",
        "test_bspv_cap.py::test_bound_below_every_covered_schedule_on_a_dense_grid",
        "test_bspv_cap.py::test_bound_below_every_covered_schedule_on_a_grid_dv_free",
        "test_backward_slots_dv.py::test_the_bound_is_below_every_covered_exact_cost_on_a_grid",
        "test_backward_once.py::test_the_bounds_stay_below_every_covered_exact_cost_on_a_grid",
        "test_backward_slots_dv.py::test_the_numerical_search_stays_below_the_proved_per_segment_bound",
        "test_byo.py::test_doc_example_end_to_end_check_store_and_report",
        "test_cli_fuzz.py::test_cli_fuzz_no_traceback_exit_0_or_2_one_line_errors_json_objects",
        "test_constants.py::test_lower_bounds_below_every_exact_cost_on_a_grid",
        "test_constants.py::test_small_cache_bound_below_every_exact_cost_on_a_grid",
        "test_cuda.py::test_emulated_flash2_counts_equal_the_model_and_output_matches_reference",
        "test_cuda.py::test_emulated_square_tiling_count_equals_model_on_random_shapes",
        "test_packaging.py::test_layer_contracts_hold_on_the_installed_package",
        "test_pebble.py::test_sandwich_matmul_2x2x2_every_M",
        "test_report.py::test_cli_report_twice_with_different_worker_counts_is_byte_identical",
        "test_report.py::test_every_section_has_content",
        "test_report.py::test_html_is_self_contained_and_markdown_figures_exist",
        "test_report.py::test_no_false_no_configuration_line_under_asymptotic_only_bounds",
        "test_report.py::test_same_inputs_give_byte_identical_files",
        "test_report.py::test_summary_counts_the_verdicts_of_the_claims_about_each_regimes_bounds",
        "test_sweep.py::test_sigkill_mid_sweep_then_rerun_loses_and_duplicates_nothing",
        "test_distributed_gloo.py::test_gloo_bytes_equal_the_formula_and_outputs_equal_torch_autograd",
        # the gate's figures (the first collect of the module counts the Triton kernels) and the masks' closed forms
        "test_gate.py::test_update_then_gate_passes_and_the_file_is_written_atomically",
        "test_gate.py::test_planted_one_word_io_regression_fails_the_gate",
        "test_gate.py::test_planted_lost_proof_fails_the_gate_at_once",
        "test_gate.py::test_an_improved_count_is_a_note_not_a_failure",
        "test_gate.py::test_the_gate_holds_every_formula_table_and_causal_and_gqa_counts",
        "test_gate.py::test_a_grown_workload_or_backward_count_fails_the_gate",
        "test_gate.py::test_a_planted_regression_fails_attnio_gate_end_to_end",
        "test_masks.py::test_closed_forms_proved_by_z3_against_the_definition_on_all_small_cases",
    ),
}


# "file.py::test_name" -> how many of its parametrisations run by default (evenly spread over the collection
# order, the first and the last included); the others carry ``nightly``. Each of these tests proves one catalog
# claim per parametrisation, with z3 or with both solvers: the whole catalog is re-proved nightly (tools/nightly.sh)
# and its record checked fresh in every run (tests/test_crosscheck_record.py).
SAMPLED: dict[str, int] = {
    "test_bspv.py::test_claim_proved_by_z3": 2,
    "test_bspv.py::test_claim_second_opinion_cvc5": 1,
    "test_backward_slots.py::test_cvc5_proves_the_slots_steps_too": 1,
    "test_approx_bounds.py::test_derivation_step_is_proved_by_z3_and_by_cvc5": 1,
    "test_backward_claims.py::test_every_backward_step_and_consistency_link_is_proved": 3,
    "test_backward_claims.py::test_cvc5_proves_the_bwd_sdp_steps_too": 1,
    "test_backward_small.py::test_every_small_cache_claim_is_proved_by_z3_and_cvc5": 1,
    "test_backward_small.py::test_the_bs_steps_the_small_cache_bounds_reuse_are_proved": 2,
    "test_backward_lift.py::test_every_lift_claim_is_proved_by_z3_and_cvc5": 1,
    "test_backward_once.py::test_every_once_claim_is_proved_by_z3_and_cvc5": 1,
    "test_constants.py::test_step_claim_proved_by_z3": 3,
    "test_constants.py::test_step_claim_second_opinion_cvc5": 1,
    "test_constants.py::test_small_cache_bound_below_every_exact_cost_proved_by_z3": 2,
    "test_constants.py::test_lower_bounds_below_every_exact_cost_proved_by_z3": 2,
    "test_workloads.py::test_every_workload_claim_is_proved_by_z3": 3,
    "test_workloads_bwd.py::test_cvc5_re_proves_the_chain_links": 1,
    "test_b3p.py::test_step_claim_is_proved_by_z3_and_by_cvc5": 1,
    "test_mask_claims.py::test_claim_is_proved_by_z3": 3,
    "test_mask_claims.py::test_claim_is_proved_by_z3_and_by_cvc5_causal_links_and_every_other_claim": 1,
    "test_bwd_slots_p.py::test_claim_is_proved_by_z3_and_by_cvc5": 1,
}


def _sample(n: int, keep: int) -> set[int]:
    """``keep`` indices of range(n), evenly spread, the first and the last included (all of them when n ≤ keep).

    >>> sorted(_sample(10, 3)), sorted(_sample(2, 3)), sorted(_sample(5, 1))
    ([0, 4, 9], [0, 1], [0])
    """
    if n <= keep:
        return set(range(n))
    if keep == 1:
        return {0}
    return {round(i * (n - 1) / (keep - 1)) for i in range(keep)}


def _name_of(item: pytest.Item) -> str:
    return f"{item.path.name}::{getattr(item, 'originalname', None) or item.name.split('[')[0]}"


def _mark_sampled(items: list[pytest.Item]) -> None:
    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        if _name_of(item) in SAMPLED:
            groups.setdefault(_name_of(item), []).append(item)
    for name, group in groups.items():
        kept = _sample(len(group), SAMPLED[name])
        for i, item in enumerate(group):
            if i not in kept:
                item.add_marker(pytest.mark.nightly)


def _nightly_selected(config: pytest.Config) -> bool:
    """Whether the long tier (``slow`` and ``nightly`` tests) runs: under ``ATTNIO_NIGHTLY=1`` or a ``-m`` naming
    either (tools/long_tier.sh, tools/nightly.sh); the default run leaves it out."""
    expr = config.getoption("markexpr", "") or ""
    return os.environ.get("ATTNIO_NIGHTLY") == "1" or "nightly" in expr or "slow" in expr


def _tiers_of(item: pytest.Item) -> set[str]:
    file = item.path.name
    name = getattr(item, "originalname", None) or item.name.split("[")[0]
    out = {m for m, where in TIERS.items() if file in where or f"{file}::{name}" in where}
    return out | {"solver"} if "cvc5" in out else out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from attnio.algorithms.backend import gpu_available

    for item in items:
        for mark in sorted(_tiers_of(item) - {m.name for m in item.iter_markers()}):
            item.add_marker(getattr(pytest.mark, mark))
    _mark_sampled(items)
    if not _nightly_selected(config):
        def long(i: pytest.Item) -> bool:
            return i.get_closest_marker("nightly") is not None or i.get_closest_marker("slow") is not None

        left_out = [i for i in items if long(i)]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [i for i in items if not long(i)]

    skips = {
        "gpu": (gpu_available(), "no CUDA device (or CuPy not installed): GPU test skipped"),
        "oracle": (_has_torch(), "torch not installed: external oracle test skipped (pip install -e '.[oracle]')"),
        "nvcc": (shutil.which("nvcc") is not None, "nvcc not on PATH: CUDA compile test skipped"),
    }
    for item in items:
        for mark, (available, reason) in skips.items():
            if mark in item.keywords and not available:
                item.add_marker(pytest.mark.skip(reason=reason))


def _guards() -> list[tuple[str, object, str]]:
    """(marker, object, method) whose call means a test belongs to that tier."""
    import multiprocessing.process
    import subprocess

    out: list[tuple[str, object, str]] = [
        ("subprocess", subprocess.Popen, "__init__"),
        ("subprocess", multiprocessing.process.BaseProcess, "start"),
    ]
    try:
        import z3

        out += [("solver", z3.Solver, "check"), ("solver", z3.Optimize, "check")]
    except ImportError:
        pass
    try:
        import cvc5.pythonic as cvc5p

        out.append(("cvc5", cvc5p.Solver, "check"))
    except ImportError:
        pass
    return out


@pytest.fixture(autouse=True)
def _marker_audit(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Under ATTNIO_MARKER_AUDIT=1, record each tier a test uses without its marker, and fail it at the end."""
    if os.environ.get("ATTNIO_MARKER_AUDIT") != "1":
        yield
        return
    marks = {m.name for m in request.node.iter_markers()}
    used: set[str] = set()
    for mark, owner, method in _guards():
        if mark in marks:
            continue
        original = getattr(owner, method)

        def spy(*args, _original=original, _mark=mark, **kwargs):  # type: ignore[no-untyped-def]
            used.add(_mark)
            return _original(*args, **kwargs)

        monkeypatch.setattr(owner, method, spy)
    yield
    if used:
        pytest.fail(f"marker audit: uses {', '.join(sorted(used))} without the marker; add it to TIERS in tests/conftest.py", pytrace=False)


@pytest.fixture(scope="session")
def triton_measured() -> list | None:
    """Every registered Triton kernel configuration counted once per test process (``attnio.triton.gate.measure()``,
    the costliest figure of a gate or a report: seconds of interpreter per kernel); None without Triton."""
    from attnio.triton import gate

    return None if gate.available() is not None else gate.measure()


@pytest.fixture(scope="module")
def triton_once(triton_measured: list | None) -> Iterator[None]:
    """For a module that builds the gate's figures or the report many times (test_gate.py, test_report.py, one
    xdist group): ``attnio.triton.gate.measure()`` answers with the count of :func:`triton_measured`; a call with
    explicit entries still counts them."""
    from attnio.triton import gate

    real = gate.measure

    def measure(entries: list | None = None) -> list:
        return real(entries) if entries is not None or triton_measured is None else list(triton_measured)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gate, "measure", measure)
        yield
