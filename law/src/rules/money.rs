//! Amounts in force (R22): fees of art. 12 and fines of arts. 17 §2 III and 32 II, corrected by
//! the IPCA as art. 12 §1 says — value in force in year Y = base × Π_{y=2004}^{Y−1} (1 + IPCA_y).
//!
//! Rounding policy (explicit, because it changes the cents): the factor is compounded without
//! intermediate rounding (`rust_decimal`, 28 significant digits), the product base × factor is
//! rounded **once**, to centavos, half away from zero. Rounding each year would give
//! R$ 797,03 instead of R$ 797,02 for R$ 240,00 in 2026.
//!
//! The series is data ([`IpcaSeries`], part of the registry's law parameters): the office enters
//! each year's index once IBGE publishes it, and until then an amount for the following year is
//! refused with [`MoneyError::MissingIndex`] naming the missing year. [`IPCA`] is only the
//! initial data, what a registry holds before the office changed anything.

use rust_decimal::{Decimal, RoundingStrategy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Year the base values of Lei 4.019/2004 were set.
pub const BASE_YEAR: i32 = 2004;

/// IPCA accumulated January–December, in percent, per year, as published by IBGE up to 2025:
/// the initial content of [`IpcaSeries`] (a registry's own series may go further).
pub const IPCA: &[(i32, Decimal)] = &[
    (2004, Decimal::from_parts(760, 0, 0, false, 2)),
    (2005, Decimal::from_parts(569, 0, 0, false, 2)),
    (2006, Decimal::from_parts(314, 0, 0, false, 2)),
    (2007, Decimal::from_parts(446, 0, 0, false, 2)),
    (2008, Decimal::from_parts(590, 0, 0, false, 2)),
    (2009, Decimal::from_parts(431, 0, 0, false, 2)),
    (2010, Decimal::from_parts(591, 0, 0, false, 2)),
    (2011, Decimal::from_parts(650, 0, 0, false, 2)),
    (2012, Decimal::from_parts(584, 0, 0, false, 2)),
    (2013, Decimal::from_parts(591, 0, 0, false, 2)),
    (2014, Decimal::from_parts(641, 0, 0, false, 2)),
    (2015, Decimal::from_parts(1067, 0, 0, false, 2)),
    (2016, Decimal::from_parts(629, 0, 0, false, 2)),
    (2017, Decimal::from_parts(295, 0, 0, false, 2)),
    (2018, Decimal::from_parts(375, 0, 0, false, 2)),
    (2019, Decimal::from_parts(431, 0, 0, false, 2)),
    (2020, Decimal::from_parts(452, 0, 0, false, 2)),
    (2021, Decimal::from_parts(1006, 0, 0, false, 2)),
    (2022, Decimal::from_parts(579, 0, 0, false, 2)),
    (2023, Decimal::from_parts(462, 0, 0, false, 2)),
    (2024, Decimal::from_parts(483, 0, 0, false, 2)),
    (2025, Decimal::from_parts(426, 0, 0, false, 2)),
];

/// Lowest annual IPCA the office may enter, in percent. The IPCA has never been negative over
/// a calendar year since the Real (1994; lowest 1.65 % in 1998): −10 leaves room for a real
/// deflation while refusing a sign typo on a large value.
pub const IPCA_MIN_PERCENT: Decimal = Decimal::from_parts(10, 0, 0, true, 0);

/// Highest annual IPCA the office may enter, in percent. The highest since the Real is 22.41 %
/// (1995); 100 still admits hyperinflation-like years, and refuses the typical typo of a value
/// without its decimal point (426 for 4,26).
pub const IPCA_MAX_PERCENT: Decimal = Decimal::ONE_HUNDRED;

/// Decimal places of an entered index: IBGE publishes the accumulated IPCA with two.
pub const IPCA_DECIMAL_PLACES: u32 = 2;

/// One year's IPCA, accumulated January–December, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IpcaYear {
    pub year: i32,
    /// E.g. `"4.26"` for 4,26 %.
    pub percent: Decimal,
}

/// The IPCA series amounts are corrected by: one entry per year from [`BASE_YEAR`], with no
/// gaps, in year order (checked by [`IpcaSeries::check`] and kept by [`IpcaSeries::add`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct IpcaSeries {
    years: Vec<IpcaYear>,
}

impl Default for IpcaSeries {
    /// The compiled-in table [`IPCA`].
    fn default() -> Self {
        Self {
            years: IPCA
                .iter()
                .map(|&(year, percent)| IpcaYear { year, percent })
                .collect(),
        }
    }
}

/// Why an IPCA entry or series is not accepted (messages for the office, in Portuguese).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IpcaError {
    #[error("O IPCA de {0} já está cadastrado; a série não aceita o mesmo ano duas vezes.")]
    AlreadyPresent(i32),
    #[error("O próximo IPCA a cadastrar é o de {expected}, não o de {year}.")]
    OutOfSequence { expected: i32, year: i32 },
    #[error(
        "O IPCA acumulado de {year} só é conhecido depois de dezembro de {year}; hoje ainda é {today_year}."
    )]
    NotYetKnown { year: i32, today_year: i32 },
    #[error(
        "O IPCA de {year} informado ({percent} %) está fora do intervalo aceito, de {min} % a {max} %."
    )]
    OutOfRange {
        year: i32,
        percent: Decimal,
        min: Decimal,
        max: Decimal,
    },
    #[error("O IPCA de {year} deve ter no máximo {places} casas decimais, como o IBGE publica.")]
    TooPrecise { year: i32, places: u32 },
    #[error("A série do IPCA deve começar em {BASE_YEAR}, ano dos valores da lei.")]
    WrongStart,
}

impl IpcaSeries {
    /// The entries, in year order.
    pub fn years(&self) -> &[IpcaYear] {
        &self.years
    }

    /// The index of `year`, if entered.
    pub fn percent(&self, year: i32) -> Option<Decimal> {
        let first = self.years.first()?.year;
        let i = usize::try_from(year.checked_sub(first)?).ok()?;
        self.years
            .get(i)
            .filter(|y| y.year == year)
            .map(|y| y.percent)
    }

    /// The last year with an index.
    pub fn last_year(&self) -> Option<i32> {
        self.years.last().map(|y| y.year)
    }

    /// The year whose index is to be entered next.
    pub fn next_year(&self) -> i32 {
        self.last_year().map_or(BASE_YEAR, |y| y + 1)
    }

    /// The whole series is well formed: from 2004, one entry a year, each value plausible.
    pub fn check(&self) -> Result<(), IpcaError> {
        if self.years.first().is_some_and(|y| y.year != BASE_YEAR) {
            return Err(IpcaError::WrongStart);
        }
        for (expected, y) in (BASE_YEAR..).zip(&self.years) {
            if y.year < expected {
                return Err(IpcaError::AlreadyPresent(y.year));
            }
            if y.year > expected {
                return Err(IpcaError::OutOfSequence {
                    expected,
                    year: y.year,
                });
            }
            check_value(*y)?;
        }
        Ok(())
    }

    /// Adds the index of the next year. `today_year` is the current year in Americana: the
    /// index of a year is only known once it is over.
    pub fn add(&mut self, entry: IpcaYear, today_year: i32) -> Result<(), IpcaError> {
        if self.percent(entry.year).is_some() {
            return Err(IpcaError::AlreadyPresent(entry.year));
        }
        let expected = self.next_year();
        if entry.year != expected {
            return Err(IpcaError::OutOfSequence {
                expected,
                year: entry.year,
            });
        }
        if entry.year >= today_year {
            return Err(IpcaError::NotYetKnown {
                year: entry.year,
                today_year,
            });
        }
        check_value(entry)?;
        self.years.push(entry);
        Ok(())
    }
}

fn check_value(y: IpcaYear) -> Result<(), IpcaError> {
    if y.percent < IPCA_MIN_PERCENT || y.percent > IPCA_MAX_PERCENT {
        return Err(IpcaError::OutOfRange {
            year: y.year,
            percent: y.percent,
            min: IPCA_MIN_PERCENT,
            max: IPCA_MAX_PERCENT,
        });
    }
    if y.percent.normalize().scale() > IPCA_DECIMAL_PLACES {
        return Err(IpcaError::TooPrecise {
            year: y.year,
            places: IPCA_DECIMAL_PLACES,
        });
    }
    Ok(())
}

/// A corrected amount and how it was obtained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Corrected {
    /// Value in the law (2004 reais).
    pub base: Decimal,
    /// Year the amount is in force (from 1 January).
    pub year: i32,
    /// Π (1 + IPCA_y) for y = 2004 … year − 1, unrounded.
    pub factor: Decimal,
    /// base × factor, rounded once to centavos, half away from zero.
    pub amount: Decimal,
    pub index: String,
    pub rounding: String,
}

/// Why an amount could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    #[error(
        "o IPCA de {0} ainda não foi cadastrado pela unidade, por isso o valor em vigor em {1} ainda não pode ser calculado"
    )]
    MissingIndex(i32, i32),
    #[error("ano {0} anterior à lei (2004)")]
    BeforeLaw(i32),
    #[error("valor base negativo")]
    Negative,
    #[error("valor fora do intervalo calculável")]
    Overflow,
}

/// Factor Π (1 + IPCA_y/100) for y = 2004 … year − 1.
pub fn factor(year: i32, ipca: &IpcaSeries) -> Result<Decimal, MoneyError> {
    if year < BASE_YEAR {
        return Err(MoneyError::BeforeLaw(year));
    }
    let hundred = Decimal::ONE_HUNDRED;
    let mut f = Decimal::ONE;
    for y in BASE_YEAR..year {
        let pct = ipca.percent(y).ok_or(MoneyError::MissingIndex(y, year))?;
        let step = Decimal::ONE
            .checked_add(pct.checked_div(hundred).ok_or(MoneyError::Overflow)?)
            .ok_or(MoneyError::Overflow)?;
        f = f.checked_mul(step).ok_or(MoneyError::Overflow)?;
    }
    Ok(f)
}

/// The value of `base` (2004 reais) in force in `year`, by the series `ipca`.
pub fn corrected(base: Decimal, year: i32, ipca: &IpcaSeries) -> Result<Corrected, MoneyError> {
    if base.is_sign_negative() {
        return Err(MoneyError::Negative);
    }
    let factor = factor(year, ipca)?;
    let amount = base
        .checked_mul(factor)
        .ok_or(MoneyError::Overflow)?
        .round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
    Ok(Corrected {
        base,
        year,
        factor,
        amount,
        index: String::from("IPCA (IBGE), acumulado jan–dez do exercício anterior"),
        rounding: String::from(
            "fator composto sem arredondamento; valor arredondado uma única vez ao centavo (meio para cima)",
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal_macros::dec;

    #[test]
    fn notes_table() {
        let s = IpcaSeries::default();
        let cases = [
            (2005, dec!(5.38), dec!(10.76), dec!(258.24)),
            (2010, dec!(6.77), dec!(13.53), dec!(324.83)),
            (2015, dec!(9.10), dec!(18.21), dec!(437.03)),
            (2020, dec!(11.93), dec!(23.87), dec!(572.76)),
            (2024, dec!(15.19), dec!(30.38), dec!(729.23)),
            (2025, dec!(15.93), dec!(31.85), dec!(764.45)),
            (2026, dec!(16.60), dec!(33.21), dec!(797.02)),
        ];
        for (year, five, ten, fine) in cases {
            assert_eq!(
                corrected(dec!(5.00), year, &s).unwrap().amount,
                five,
                "{year}"
            );
            assert_eq!(
                corrected(dec!(10.00), year, &s).unwrap().amount,
                ten,
                "{year}"
            );
            assert_eq!(
                corrected(dec!(240.00), year, &s).unwrap().amount,
                fine,
                "{year}"
            );
        }
        assert_eq!(factor(2026, &s).unwrap().round_dp(6), dec!(3.320896));
    }

    #[test]
    fn per_year_rounding_would_differ() {
        let s = IpcaSeries::default();
        // The explicit policy matters: rounding every year gives 797.03.
        let mut v = dec!(240.00);
        for (_, pct) in IPCA {
            v = (v * (Decimal::ONE + pct / Decimal::ONE_HUNDRED)).round_dp(2);
        }
        assert_eq!(v, dec!(797.03));
        assert_eq!(
            corrected(dec!(240.00), 2026, &s).unwrap().amount,
            dec!(797.02)
        );
    }

    #[test]
    fn edges() {
        let s = IpcaSeries::default();
        assert_eq!(
            corrected(dec!(240.00), 2004, &s).unwrap().amount,
            dec!(240.00)
        );
        assert_eq!(
            corrected(dec!(240), 2027, &s),
            Err(MoneyError::MissingIndex(2026, 2027))
        );
        assert_eq!(
            corrected(dec!(240), 2003, &s),
            Err(MoneyError::BeforeLaw(2003))
        );
        assert_eq!(corrected(dec!(-1), 2026, &s), Err(MoneyError::Negative));
    }

    fn y(year: i32, percent: Decimal) -> IpcaYear {
        IpcaYear { year, percent }
    }

    #[test]
    fn the_initial_series_is_the_compiled_table_and_well_formed() {
        let s = IpcaSeries::default();
        assert_eq!(s.years().len(), IPCA.len());
        assert_eq!(s.next_year(), 2026);
        assert_eq!(s.percent(2025), Some(dec!(4.26)));
        assert_eq!(s.percent(2026), None);
        assert_eq!(s.percent(2003), None);
        s.check().unwrap();
    }

    #[test]
    fn once_2026_is_entered_2027_is_computable() {
        let mut s = IpcaSeries::default();
        assert_eq!(
            corrected(dec!(240), 2027, &s),
            Err(MoneyError::MissingIndex(2026, 2027))
        );
        s.add(y(2026, dec!(4.50)), 2027).unwrap();
        let c = corrected(dec!(240), 2027, &s).unwrap();
        let f2026 = factor(2026, &IpcaSeries::default()).unwrap();
        assert_eq!(c.factor, f2026 * dec!(1.045));
        // 240 × 3.320896… × 1.045, rounded once.
        assert_eq!(c.amount, dec!(832.88));
        assert_eq!(
            corrected(dec!(240), 2028, &s),
            Err(MoneyError::MissingIndex(2027, 2028))
        );
        s.check().unwrap();
    }

    #[test]
    fn adding_refuses_duplicates_gaps_the_future_and_absurd_values() {
        let mut s = IpcaSeries::default();
        assert_eq!(
            s.add(y(2025, dec!(4)), 2027),
            Err(IpcaError::AlreadyPresent(2025))
        );
        assert_eq!(
            s.add(y(2027, dec!(4)), 2028),
            Err(IpcaError::OutOfSequence {
                expected: 2026,
                year: 2027
            })
        );
        // The index of 2026 is only known in 2027.
        assert!(matches!(
            s.add(y(2026, dec!(4)), 2026),
            Err(IpcaError::NotYetKnown { .. })
        ));
        // Limits: exactly at them passes, one centavo of a percent beyond is refused.
        for bad in [IPCA_MAX_PERCENT + dec!(0.01), IPCA_MIN_PERCENT - dec!(0.01)] {
            assert!(matches!(
                s.add(y(2026, bad), 2027),
                Err(IpcaError::OutOfRange { .. })
            ));
        }
        assert_eq!(
            s.add(y(2026, dec!(4.261)), 2027),
            Err(IpcaError::TooPrecise {
                year: 2026,
                places: IPCA_DECIMAL_PLACES
            })
        );
        s.clone().add(y(2026, IPCA_MIN_PERCENT), 2027).unwrap();
        s.add(y(2026, IPCA_MAX_PERCENT), 2027).unwrap();
        s.check().unwrap();
    }

    #[test]
    fn a_series_with_a_gap_or_a_wrong_start_is_not_well_formed() {
        let gap: IpcaSeries =
            serde_json::from_str(r#"[{"year":2004,"percent":"7.6"},{"year":2006,"percent":"3"}]"#)
                .unwrap();
        assert_eq!(
            gap.check(),
            Err(IpcaError::OutOfSequence {
                expected: 2005,
                year: 2006
            })
        );
        let late: IpcaSeries = serde_json::from_str(r#"[{"year":2005,"percent":"5.69"}]"#).unwrap();
        assert_eq!(late.check(), Err(IpcaError::WrongStart));
    }
}
