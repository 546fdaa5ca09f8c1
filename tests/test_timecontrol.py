from datetime import UTC, datetime, timedelta

from pbm.timecontrol import (
    VACATION_CAP_DAYS,
    Fischer,
    TimeControl,
    chargeable,
    fischer_bank_after_move,
    vacation_accrued,
)

MON = datetime(2026, 11, 16, 12, 0, tzinfo=UTC)  # a Monday noon


def test_plain_time_counts_everything():
    assert chargeable(MON, MON + timedelta(days=7)) == timedelta(days=7)
    assert chargeable(MON, MON - timedelta(days=1)) == timedelta()


def test_weekends_free_leaves_out_saturday_and_sunday():
    week = chargeable(MON, MON + timedelta(days=7), weekends_free=True)
    assert week == timedelta(days=5)
    # Friday noon to Monday noon: only Friday afternoon and Monday morning count.
    fri = MON + timedelta(days=4)
    assert chargeable(fri, fri + timedelta(days=3), weekends_free=True) == timedelta(days=1)


def test_vacation_pauses_the_clock_and_open_pauses_run_to_the_end():
    pauses = [(MON + timedelta(days=1), MON + timedelta(days=3))]
    assert chargeable(MON, MON + timedelta(days=7), pauses=pauses) == timedelta(days=5)
    open_pause = [(MON + timedelta(days=5), None)]
    assert chargeable(MON, MON + timedelta(days=7), pauses=open_pause) == timedelta(days=5)


def test_overlapping_pauses_and_weekends_are_not_subtracted_twice():
    # Vacation Thursday noon to Tuesday noon covers the weekend.
    thu = MON + timedelta(days=3)
    pauses = [(thu, thu + timedelta(days=5)), (thu + timedelta(days=1), thu + timedelta(days=2))]
    got = chargeable(MON, MON + timedelta(days=14), weekends_free=True, pauses=pauses)
    # 14 days - 5 vacation days - the second weekend (2 days) = 7 days.
    assert got == timedelta(days=7)


def test_fischer_bank_spends_adds_and_caps():
    f = Fischer(initial_days=10, increment_days=3, max_days=12)
    assert fischer_bank_after_move(timedelta(days=10), timedelta(days=2), f) == timedelta(days=11)
    assert fischer_bank_after_move(timedelta(days=10), timedelta(hours=1), f) == timedelta(days=12)
    assert fischer_bank_after_move(timedelta(days=1), timedelta(days=2), f) == timedelta()


def test_vacation_accrues_at_the_documented_rate_up_to_the_cap():
    start = MON
    assert vacation_accrued(0.0, start, start + timedelta(days=365)) == 30.0
    assert vacation_accrued(50.0, start, start + timedelta(days=365)) == VACATION_CAP_DAYS


def test_tournament_default_is_pbmserv_one_and_seven_days():
    tc = TimeControl.tournament_default()
    assert (tc.nag_days, tc.forfeit_days) == (1.0, 7.0)
    assert (TimeControl().nag_days, TimeControl().forfeit_days) == (7.0, 21.0)
