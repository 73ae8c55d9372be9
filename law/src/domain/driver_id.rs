//! How an officer identifies the person at the wheel: a CPF or a CNH registro number.
//!
//! Both are 11 digits, so the input alone is ambiguous. A `cpf:` or `cnh:` prefix settles it;
//! without one, the number is tried as a CPF and as a CNH number (each only when its check
//! digits hold) against the registry, and a number valid as neither is refused as a typo. A CNH
//! whose check digits fail (D02 is only a warning) can still be given as `cnh:…`.

use super::{CnhNumber, Cpf, DomainError, Person, RegistryIndex};

/// A driver identification as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverId {
    Cpf(Cpf),
    Cnh(CnhNumber),
    /// 11 digits valid as both: resolved against the registry.
    Either {
        cpf: Cpf,
        cnh: CnhNumber,
    },
}

impl DriverId {
    /// Parses `cpf:…`, `cnh:…` or a bare number.
    pub fn parse(input: &str) -> Result<Self, DomainError> {
        let t = input.trim();
        let lower = t.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("cpf:") {
            return Ok(Self::Cpf(Cpf::parse_strict(rest)?));
        }
        if let Some(rest) = lower.strip_prefix("cnh:") {
            // CNH check digits are only a warning (D02), so the shape is enough here.
            return Ok(Self::Cnh(CnhNumber::parse(rest)?));
        }
        let cpf = Cpf::parse(t).ok().filter(Cpf::check_digits_ok);
        let cnh = CnhNumber::parse(t).ok().filter(CnhNumber::check_digits_ok);
        match (cpf, cnh) {
            (Some(cpf), Some(cnh)) => Ok(Self::Either { cpf, cnh }),
            (Some(cpf), None) => Ok(Self::Cpf(cpf)),
            (None, Some(cnh)) => Ok(Self::Cnh(cnh)),
            _ => Err(DomainError::Driver {
                reason: format!(
                    "{t:?} não é um CPF nem um número de CNH válido (use cpf:… ou cnh:… para forçar)"
                ),
            }),
        }
    }

    /// Finds the person in the registry, CPF first.
    pub fn resolve<'r>(&self, index: &RegistryIndex<'r>) -> Option<&'r Person> {
        match self {
            Self::Cpf(c) => index.person_by_cpf(c),
            Self::Cnh(n) => index.person_by_cnh(n),
            Self::Either { cpf, cnh } => index
                .person_by_cpf(cpf)
                .or_else(|| index.person_by_cnh(cnh)),
        }
    }

    /// The number as typed, normalised, for the record.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Cpf(c) => c.as_str(),
            Self::Cnh(n) => n.as_str(),
            Self::Either { cpf, .. } => cpf.as_str(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_forms() {
        assert!(matches!(
            DriverId::parse("111.444.777-35"),
            Ok(DriverId::Cpf(_))
        ));
        assert!(matches!(
            DriverId::parse("cnh:02650306461"),
            Ok(DriverId::Cnh(_))
        ));
        assert!(matches!(
            DriverId::parse("02650306461"),
            Ok(DriverId::Cnh(_) | DriverId::Either { .. })
        ));
        assert!(DriverId::parse("cpf:12345678901").is_err());
        assert!(DriverId::parse("12345678901").is_err());
        assert!(DriverId::parse("abc").is_err());
    }
}
