//! Deadlines (R34: arts. 33–35; R42: art. 5) counted as docs/law/reference.md, Deadlines recommends, after
//! Lei 9.784/1999 art. 66: calendar days, the day of ciência excluded, the last day included,
//! and a last day on which the Prefeitura does not open rolled to the next business day.
//!
//! The calendar is data, part of the registry's law parameters (so the office changes it without
//! a rebuild and every device counts with the same one): national fixed-date holidays (initially
//! [`national_holidays`], 20 November since 2024 by Lei 14.759/2023), the São Paulo state
//! holiday of 9 July, optional movable closures (Carnival, Corpus Christi; Good Friday is always
//! observed), municipal holidays and decreed closures.

use chrono::{Datelike, Days, NaiveDate, Weekday};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A holiday that recurs on the same day every year.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecurringHoliday {
    pub month: u32,
    pub day: u32,
    pub name: String,
    /// First year it is observed (a holiday created by a later law), if not always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_year: Option<i32>,
}

impl RecurringHoliday {
    fn falls_on(&self, date: NaiveDate) -> bool {
        self.month == date.month()
            && self.day == date.day()
            && self.from_year.is_none_or(|y| date.year() >= y)
    }
}

/// The national fixed-date holidays (Lei 662/1949, Lei 6.802/1980, Lei 14.759/2023): the
/// initial content of `CalendarConfig::national`.
pub fn national_holidays() -> Vec<RecurringHoliday> {
    let h = |month, day, name: &str, from_year| RecurringHoliday {
        month,
        day,
        name: name.to_owned(),
        from_year,
    };
    vec![
        h(1, 1, "Confraternização Universal", None),
        h(4, 21, "Tiradentes", None),
        h(5, 1, "Dia do Trabalho", None),
        h(9, 7, "Independência do Brasil", None),
        h(10, 12, "Nossa Senhora Aparecida", None),
        h(11, 2, "Finados", None),
        h(11, 15, "Proclamação da República", None),
        h(
            11,
            20,
            "Dia Nacional de Zumbi e da Consciência Negra",
            Some(2024),
        ),
        h(12, 25, "Natal", None),
    ]
}

/// A one-off closure (ponto facultativo decreed, a municipal holiday of one year).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatedClosure {
    pub date: NaiveDate,
    pub name: String,
}

/// Which days the Prefeitura is closed, beyond weekends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CalendarConfig {
    /// National fixed-date holidays (initially [`national_holidays`]).
    pub national: Vec<RecurringHoliday>,
    /// 9 July, Revolução Constitucionalista (Lei estadual 9.497/1997).
    pub sao_paulo_state_holiday: bool,
    /// Carnival Monday and Tuesday (ponto facultativo, normally observed).
    pub carnival: bool,
    /// Corpus Christi (ponto facultativo or municipal holiday).
    pub corpus_christi: bool,
    /// Americana's municipal holidays (none known yet: the office enters them).
    pub municipal: Vec<RecurringHoliday>,
    /// Decreed closures on specific dates.
    pub closures: Vec<DatedClosure>,
}

impl Default for CalendarConfig {
    fn default() -> Self {
        Self {
            national: national_holidays(),
            sao_paulo_state_holiday: true,
            carnival: true,
            corpus_christi: true,
            municipal: Vec::new(),
            closures: Vec::new(),
        }
    }
}

/// Easter Sunday (anonymous Gregorian algorithm), the anchor of the movable days.
pub fn easter(year: i32) -> Option<NaiveDate> {
    let a = year % 19;
    let b = year / 100;
    let c = year % 100;
    let d = b / 4;
    let e = b % 4;
    let f = (b + 8) / 25;
    let g = (b - f + 1) / 3;
    let h = (19 * a + b - d - g + 15) % 30;
    let i = c / 4;
    let k = c % 4;
    let l = (32 + 2 * e + 2 * i - h - k) % 7;
    let m = (a + 11 * h + 22 * l) / 451;
    let month = (h + l - 7 * m + 114) / 31;
    let day = (h + l - 7 * m + 114) % 31 + 1;
    NaiveDate::from_ymd_opt(year, u32::try_from(month).ok()?, u32::try_from(day).ok()?)
}

impl CalendarConfig {
    /// Why the Prefeitura is closed that day, if it is.
    pub fn closure_reason(&self, date: NaiveDate) -> Option<String> {
        match date.weekday() {
            Weekday::Sat => return Some(String::from("sábado")),
            Weekday::Sun => return Some(String::from("domingo")),
            _ => {}
        }
        self.holiday_name(date)
    }

    /// The holiday or closure on that date, weekends aside.
    pub fn holiday_name(&self, date: NaiveDate) -> Option<String> {
        if let Some(h) = self.national.iter().find(|h| h.falls_on(date)) {
            return Some(h.name.clone());
        }
        if self.sao_paulo_state_holiday && (date.month(), date.day()) == (7, 9) {
            return Some(String::from("Revolução Constitucionalista de 1932"));
        }
        if let Some(e) = easter(date.year()) {
            let offset = (date - e).num_days();
            match offset {
                -2 => return Some(String::from("Sexta-feira Santa")),
                -48 | -47 if self.carnival => return Some(String::from("Carnaval")),
                60 if self.corpus_christi => return Some(String::from("Corpus Christi")),
                _ => {}
            }
        }
        if let Some(h) = self.municipal.iter().find(|h| h.falls_on(date)) {
            return Some(h.name.clone());
        }
        self.closures
            .iter()
            .find(|c| c.date == date)
            .map(|c| c.name.clone())
    }

    /// True on a weekday with no holiday or closure.
    pub fn is_business_day(&self, date: NaiveDate) -> bool {
        self.closure_reason(date).is_none()
    }
}

/// A computed deadline with the reasoning that led to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Deadline {
    /// Day of ciência (excluded from the count).
    pub start: NaiveDate,
    pub days: u32,
    /// `start + days`, before rolling over.
    pub nominal: NaiveDate,
    /// Last day to file, rolled to a business day.
    pub deadline: NaiveDate,
    /// Days skipped and why ("2026-11-20: Dia Nacional de Zumbi …").
    pub skipped: Vec<String>,
}

/// Errors counting a deadline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeadlineError {
    #[error("data fora do calendário suportado")]
    OutOfRange,
}

/// `days` calendar days after `start` (day 1 = the next day), rolled forward while closed.
pub fn count(start: NaiveDate, days: u32, cal: &CalendarConfig) -> Result<Deadline, DeadlineError> {
    let nominal = start
        .checked_add_days(Days::new(u64::from(days)))
        .ok_or(DeadlineError::OutOfRange)?;
    let mut deadline = nominal;
    let mut skipped = Vec::new();
    while let Some(reason) = cal.closure_reason(deadline) {
        skipped.push(format!("{deadline}: {reason}"));
        deadline = deadline.succ_opt().ok_or(DeadlineError::OutOfRange)?;
    }
    Ok(Deadline {
        start,
        days,
        nominal,
        deadline,
        skipped,
    })
}

/// Art. 35: appeal within 10 days of ciência of the penalty (R34).
pub fn appeal_deadline(
    notified: NaiveDate,
    cal: &CalendarConfig,
) -> Result<Deadline, DeadlineError> {
    count(notified, 10, cal)
}

/// Art. 5: appeal against the choice of permit holders within 5 days (R42).
pub fn selection_appeal_deadline(
    published: NaiveDate,
    cal: &CalendarConfig,
) -> Result<Deadline, DeadlineError> {
    count(published, 5, cal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn easter_known_years() {
        assert_eq!(easter(2024), Some(d(2024, 3, 31)));
        assert_eq!(easter(2025), Some(d(2025, 4, 20)));
        assert_eq!(easter(2026), Some(d(2026, 4, 5)));
    }

    #[test]
    fn issue_examples() {
        let cal = CalendarConfig::default();
        // Day 10 is Sunday 29 Nov 2026 → Monday 30.
        let dl = appeal_deadline(d(2026, 11, 19), &cal).unwrap();
        assert_eq!(dl.nominal, d(2026, 11, 29));
        assert_eq!(dl.deadline, d(2026, 11, 30));
        assert_eq!(dl.skipped, vec!["2026-11-29: domingo"]);
        // Day 10 is Friday 20 Nov 2026, a national holiday → Monday 23 (over the weekend).
        let dl = appeal_deadline(d(2026, 11, 10), &cal).unwrap();
        assert_eq!(dl.deadline, d(2026, 11, 23));
        assert_eq!(dl.skipped.len(), 3);
    }

    #[test]
    fn business_day_deadline_is_not_moved() {
        let cal = CalendarConfig::default();
        // 2026-11-02 (Mon, Finados) + 10 = Thursday 12 Nov: a business day.
        let dl = appeal_deadline(d(2026, 11, 2), &cal).unwrap();
        assert_eq!(dl.deadline, d(2026, 11, 12));
        assert!(dl.skipped.is_empty());
        // The day of ciência itself never counts, even when it is a holiday.
        assert_eq!(
            count(d(2026, 12, 25), 1, &cal).unwrap().deadline,
            d(2026, 12, 28)
        );
    }

    #[test]
    fn movable_and_configured_closures() {
        let mut cal = CalendarConfig::default();
        assert_eq!(
            cal.holiday_name(d(2026, 4, 3)).as_deref(),
            Some("Sexta-feira Santa")
        );
        assert_eq!(
            cal.holiday_name(d(2026, 2, 17)).as_deref(),
            Some("Carnaval")
        );
        assert_eq!(
            cal.holiday_name(d(2026, 6, 4)).as_deref(),
            Some("Corpus Christi")
        );
        assert_eq!(
            cal.holiday_name(d(2026, 7, 9)).as_deref(),
            Some("Revolução Constitucionalista de 1932")
        );
        // 20 November is national only from 2024.
        assert!(cal.holiday_name(d(2023, 11, 20)).is_none());
        cal.carnival = false;
        assert!(cal.is_business_day(d(2026, 2, 17)));
        cal.municipal.push(RecurringHoliday {
            month: 8,
            day: 27,
            name: "Aniversário de Americana".into(),
            from_year: None,
        });
        assert!(!cal.is_business_day(d(2026, 8, 27)));
        cal.closures.push(DatedClosure {
            date: d(2026, 12, 24),
            name: "Ponto facultativo".into(),
        });
        // 2026-12-14 + 10 = Thursday 24 Dec (closure) → Friday 25 (Natal) → Monday 28.
        assert_eq!(
            appeal_deadline(d(2026, 12, 14), &cal).unwrap().deadline,
            d(2026, 12, 28)
        );
    }
}
