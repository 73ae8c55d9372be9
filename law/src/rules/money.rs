//! Amounts in force (R22): fees of art. 12 and fines of arts. 17 §2 III and 32 II, corrected by
//! the IPCA as art. 12 §1 says — value in force in year Y = base × Π_{y=2004}^{Y−1} (1 + IPCA_y).
//!
//! Rounding policy (explicit, because it changes the cents): the factor is compounded without
//! intermediate rounding (`rust_decimal`, 28 significant digits), the product base × factor is
//! rounded **once**, to centavos, half away from zero. Rounding each year would give
//! R$ 797,03 instead of R$ 797,02 for R$ 240,00 in 2026 (NOTES §2.8).

use rust_decimal::{Decimal, RoundingStrategy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Year the base values of Lei 4.019/2004 were set.
pub const BASE_YEAR: i32 = 2004;

/// IPCA accumulated January–December, in percent, per year (NOTES §2.8).
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
    #[error("IPCA de {0} não está na tabela: o valor de {1} ainda não pode ser calculado")]
    MissingIndex(i32, i32),
    #[error("ano {0} anterior à lei (2004)")]
    BeforeLaw(i32),
    #[error("valor base negativo")]
    Negative,
    #[error("valor fora do intervalo calculável")]
    Overflow,
}

/// Factor Π (1 + IPCA_y/100) for y = 2004 … year − 1.
pub fn factor(year: i32) -> Result<Decimal, MoneyError> {
    if year < BASE_YEAR {
        return Err(MoneyError::BeforeLaw(year));
    }
    let hundred = Decimal::ONE_HUNDRED;
    let mut f = Decimal::ONE;
    for y in BASE_YEAR..year {
        let pct = IPCA
            .iter()
            .find(|(iy, _)| *iy == y)
            .map(|(_, p)| *p)
            .ok_or(MoneyError::MissingIndex(y, year))?;
        let step = Decimal::ONE
            .checked_add(pct.checked_div(hundred).ok_or(MoneyError::Overflow)?)
            .ok_or(MoneyError::Overflow)?;
        f = f.checked_mul(step).ok_or(MoneyError::Overflow)?;
    }
    Ok(f)
}

/// The value of `base` (2004 reais) in force in `year`.
pub fn corrected(base: Decimal, year: i32) -> Result<Corrected, MoneyError> {
    if base.is_sign_negative() {
        return Err(MoneyError::Negative);
    }
    let factor = factor(year)?;
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
            assert_eq!(corrected(dec!(5.00), year).unwrap().amount, five, "{year}");
            assert_eq!(corrected(dec!(10.00), year).unwrap().amount, ten, "{year}");
            assert_eq!(
                corrected(dec!(240.00), year).unwrap().amount,
                fine,
                "{year}"
            );
        }
        assert_eq!(factor(2026).unwrap().round_dp(6), dec!(3.320896));
    }

    #[test]
    fn per_year_rounding_would_differ() {
        // The explicit policy matters: rounding every year gives 797.03.
        let mut v = dec!(240.00);
        for (_, pct) in IPCA {
            v = (v * (Decimal::ONE + pct / Decimal::ONE_HUNDRED)).round_dp(2);
        }
        assert_eq!(v, dec!(797.03));
        assert_eq!(corrected(dec!(240.00), 2026).unwrap().amount, dec!(797.02));
    }

    #[test]
    fn edges() {
        assert_eq!(corrected(dec!(240.00), 2004).unwrap().amount, dec!(240.00));
        assert_eq!(
            corrected(dec!(240), 2027),
            Err(MoneyError::MissingIndex(2026, 2027))
        );
        assert_eq!(corrected(dec!(240), 2003), Err(MoneyError::BeforeLaw(2003)));
        assert_eq!(corrected(dec!(-1), 2026), Err(MoneyError::Negative));
    }
}
